package simfabric

import (
	"math/rand/v2"
	"time"
)

// link is the state of one directed link.
type link struct {
	cfg LinkConfig
	rng *rand.Rand

	cut bool
	// epoch counts cuts. A packet remembers the epoch in which it entered the
	// link; if it differs when the packet leaves, the link was cut meanwhile.
	epoch uint64

	// busyUntil is when the transmitter finishes the last queued packet;
	// busyRem is the fraction of a nanosecond beyond it, in units of
	// 1/Rate ns, so that long-run throughput is exactly Rate.
	busyUntil time.Duration
	busyRem   int64
	// queue holds the admitted packets that have not finished serialising,
	// oldest first, from queue[qhead]. Its total size is at most QueueBytes.
	queue       []queued
	qhead       int
	queuedBytes int
	// lastArrival is the latest arrival time at the far end of a packet that
	// was not reordered; jitter never lets a packet arrive before it.
	lastArrival time.Duration
	// train is the last packet's loss train (LinkConfig.LossTrain).
	train lossTrain

	stats Stats
}

// lossTrain is a run of packets of one path that entered a link at the
// same instant and share one loss draw.
type lossTrain struct {
	at   time.Duration
	path PathID
	n    int // packets in it so far; 0: none
	lost bool
}

// lost draws whether pkt, entering at t, is lost: one draw per packet, or
// with LossTrain one per train.
func (l *link) lost(pkt *packet, t time.Duration) bool {
	tr := &l.train
	if l.cfg.LossTrain > 1 && tr.n > 0 && tr.n < l.cfg.LossTrain && tr.at == t && tr.path == pkt.path {
		tr.n++
		return tr.lost
	}
	lost := l.chance(l.cfg.Loss)
	if l.cfg.LossTrain > 1 {
		*tr = lossTrain{at: t, path: pkt.path, n: 1, lost: lost}
	}
	return lost
}

type queued struct {
	finish time.Duration
	size   int
}

// linkSeed mixes the fabric seed and a link id into a PCG seed (splitmix64
// finaliser), so each link has its own stream.
func linkSeed(seed int64, id LinkID) (uint64, uint64) {
	x := uint64(seed) ^ (uint64(id)+1)*0x9e3779b97f4a7c15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x, uint64(id)
}

func newLink(cfg LinkConfig, seed int64, id LinkID) *link {
	s1, s2 := linkSeed(seed, id)
	return &link{cfg: cfg, rng: rand.New(rand.NewPCG(s1, s2))}
}

// drain removes the packets that finished serialising by t and returns the
// bytes still queued.
func (l *link) drain(t time.Duration) int {
	for l.qhead < len(l.queue) && l.queue[l.qhead].finish <= t {
		l.queuedBytes -= l.queue[l.qhead].size
		l.qhead++
	}
	if l.qhead == len(l.queue) {
		l.queue, l.qhead = l.queue[:0], 0
	} else if l.qhead > 64 && l.qhead > len(l.queue)/2 {
		n := copy(l.queue, l.queue[l.qhead:])
		l.queue, l.qhead = l.queue[:n], 0
	}
	return l.queuedBytes
}

// flush empties the queue, as when the link is cut.
func (l *link) flush(now time.Duration) {
	l.queue, l.qhead, l.queuedBytes = l.queue[:0], 0, 0
	l.busyUntil, l.busyRem, l.lastArrival = now, 0, 0
}

// serialise queues a packet of size bytes arriving at t and returns when it
// finishes serialising. The caller has checked that the queue has room.
func (l *link) serialise(t time.Duration, size int) time.Duration {
	if l.cfg.Rate == 0 {
		return t
	}
	if t >= l.busyUntil {
		l.busyUntil, l.busyRem = t, 0
	}
	total := int64(size)*int64(time.Second) + l.busyRem
	l.busyUntil += time.Duration(total / l.cfg.Rate)
	l.busyRem = total % l.cfg.Rate
	l.queue = append(l.queue, queued{finish: l.busyUntil, size: size})
	l.queuedBytes += size
	return l.busyUntil
}

// chance draws true with probability p. It draws nothing when p is 0, so a
// link without faults consumes no randomness.
func (l *link) chance(p float64) bool {
	return p > 0 && l.rng.Float64() < p
}

// arrival returns when a packet that finished serialising at finish reaches
// the far end, drawing its jitter and reordering.
func (l *link) arrival(finish time.Duration) time.Duration {
	at := finish + l.cfg.Delay
	if l.cfg.Jitter > 0 {
		at += time.Duration(l.rng.Int64N(int64(l.cfg.Jitter) + 1))
	}
	if l.chance(l.cfg.Reorder) {
		return max(at, l.lastArrival) + l.cfg.ReorderDelay
	}
	at = max(at, l.lastArrival)
	l.lastArrival = at
	return at
}

// flipBit flips one random bit of b, which must not be empty.
func (l *link) flipBit(b []byte) {
	i := l.rng.IntN(len(b) * 8)
	b[i/8] ^= 1 << (i % 8)
}
