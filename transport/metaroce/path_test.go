package metaroce

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
	"github.com/stretchr/testify/require"
)

// pathStory drives one path with a fake clock: it sends packets, builds
// the ACK blocks a receiver would send, and records which packets were
// acknowledged or lost.
type pathStory struct {
	t     *testing.T
	cfg   Config
	p     *path
	now   time.Duration
	rcv   recvPath // the far end's view
	acked []uint64 // offsets acknowledged
	lost  []uint64 // offsets declared lost
}

func newPathStory(t *testing.T) *pathStory {
	cfg, err := Config{MinRTO: 100 * time.Microsecond}.withDefaults()
	require.NoError(t, err)
	return &pathStory{t: t, cfg: cfg, p: newPath(0, 1, &cfg, 1000)}
}

func (s *pathStory) packetAcked(rec *sentPacket) { s.acked = append(s.acked, rec.offset) }
func (s *pathStory) packetLost(rec *sentPacket)  { s.lost = append(s.lost, rec.offset) }

// send sends n packets now; packet k carries offset = its sequence number.
func (s *pathStory) send(n int) {
	for range n {
		s.p.onSent(sentPacket{sentAt: s.now, offset: s.p.next, size: 1000}, s.now, &s.cfg)
	}
}

// arrive makes the far end receive seqs (sent at sentAt) and returns the
// ACK block it would send at now.
func (s *pathStory) arrive(sentAt time.Duration, ce bool, seqs ...uint64) *wire.AckBlock {
	for _, q := range seqs {
		s.rcv.receive(q, sentAt, s.now, ce)
	}
	var blk wire.AckBlock
	s.rcv.block(0, s.now, &blk)
	return &blk
}

func (s *pathStory) ack(blk *wire.AckBlock) { s.p.onBlock(blk, s.now, s.now, s.now, s.now, &s.cfg, s) }

func TestStorySlowStartThenAdditiveIncrease(t *testing.T) {
	s := newPathStory(t)
	require.Equal(t, 16_000, s.p.win.cwnd, "the only path starts with all of InitialWindow")
	require.Equal(t, 4_000, newPath(1, 4, &s.cfg, 1000).win.cwnd, "four paths share it")
	s.send(16)
	s.now = 100 * time.Microsecond
	s.ack(s.arrive(0, false, seqs(0, 16)...))
	require.Equal(t, 32_000, s.p.win.cwnd, "slow start doubles per round trip")
	require.Equal(t, 100*time.Microsecond, s.p.rtt.srtt)

	// A congestion signal ends slow start; from then on one packet per window.
	s.p.win.onSignal(signalECN, s.now, s.now, 0, 0)
	w := s.p.win.cwnd
	n := uint64(w/1000 + 1) // a window's worth of acknowledgements
	s.send(int(n))
	s.now += 100 * time.Microsecond
	s.ack(s.arrive(100*time.Microsecond, false, seqs(16, 16+n)...))
	require.Equal(t, w+1000, s.p.win.cwnd)
}

func TestStoryECNCutsOncePerRoundTrip(t *testing.T) {
	s := newPathStory(t)
	s.send(10)
	s.now = 100 * time.Microsecond
	s.ack(s.arrive(0, true, 0, 1))
	require.Equal(t, 12_800, s.p.win.cwnd, "16 packets (+2 acked) cut by 0.8")
	require.Equal(t, PathSkip, func() PathState { s.p.refreshState(s.now); return s.p.state }())
	// More marks on packets sent before the cut are the same episode.
	s.ack(s.arrive(0, true, 2, 3))
	require.Equal(t, int64(1), s.p.win.cuts[signalECN])
	// A mark on a packet sent after the cut is a new episode.
	s.now = 200 * time.Microsecond
	s.send(2)
	s.now = 300 * time.Microsecond
	s.ack(s.arrive(200*time.Microsecond, true, 10, 11))
	require.Equal(t, int64(2), s.p.win.cuts[signalECN])
	s.p.refreshState(s.now + time.Millisecond)
	require.Equal(t, PathGood, s.p.state, "skip lasts about one RTT")
}

func TestStoryRisingDelayCutsTheWindow(t *testing.T) {
	s := newPathStory(t)
	s.send(4)
	s.now = 100 * time.Microsecond
	s.ack(s.arrive(0, false, 0, 1)) // min RTT 100µs; target max(20µs, 50µs)
	require.Zero(t, s.p.win.cuts[signalDelay])
	s.send(2)
	s.now = 100*time.Microsecond + 160*time.Microsecond // RTT 160µs > 150µs
	s.ack(s.arrive(100*time.Microsecond, false, 2, 3))
	require.Zero(t, s.p.win.cuts[signalDelay], "one high sample is no standing queue")
	s.send(2)
	s.now += 160 * time.Microsecond // the queue stood for a round trip
	s.ack(s.arrive(s.now-160*time.Microsecond, false, 4, 5, 6, 7))
	require.Equal(t, int64(1), s.p.win.cuts[signalDelay])
}

func TestStoryGapOnOnePathIsLossOnlyAfterThreePacketsOrTime(t *testing.T) {
	s := newPathStory(t)
	s.send(6)
	s.now = 100 * time.Microsecond
	s.ack(s.arrive(0, false, 0, 2, 3)) // 1 missing, 2 later packets acked
	require.Empty(t, s.lost, "two later packets could be reordering")
	require.NotZero(t, s.p.lossAt, "but a loss timer is armed")
	s.ack(s.arrive(0, false, 4))
	require.Equal(t, []uint64{1}, s.lost, "three later packets acked: lost")
	require.Equal(t, []uint64{0, 2, 3, 4}, s.acked)
	require.Zero(t, s.p.win.cuts[signalLoss], "no queue: a random loss does not cut the window")
}

func TestStoryLossTimerCatchesTheLastHole(t *testing.T) {
	s := newPathStory(t)
	s.send(3)
	s.now = 100 * time.Microsecond
	s.ack(s.arrive(0, false, 0, 2)) // 1 missing, only one later packet
	require.Empty(t, s.lost)
	s.now = s.p.lossAt
	s.p.onTimer(s.now, &s.cfg, s, false)
	require.Equal(t, []uint64{1}, s.lost)
}

func TestStorySilentPathGoesSuspectThenDeadThenRevives(t *testing.T) {
	s := newPathStory(t)
	s.send(1)
	s.now = 100 * time.Microsecond
	s.ack(s.arrive(0, false, 0))
	s.send(5) // the path now drops everything
	require.NotZero(t, s.p.rtoAt)
	s.now = s.p.rtoAt
	require.True(t, s.p.onTimer(s.now, &s.cfg, s, false), "first probe goes at once")
	require.Equal(t, PathSuspect, s.p.state)
	require.Equal(t, []uint64{1, 2, 3, 4, 5}, s.lost, "its packets move to other paths")
	require.Equal(t, -1, s.p.room(), "no data on a suspect path")
	for range s.cfg.DeadAfter {
		s.now = s.p.probeAt
		require.True(t, s.p.onTimer(s.now, &s.cfg, s, false))
	}
	require.Equal(t, PathDead, s.p.state)
	require.Equal(t, s.now+s.cfg.ProbeInterval, s.p.probeAt, "dead paths are probed slowly")
	s.p.heardFrom() // a probe reply
	require.Equal(t, PathGood, s.p.state)
	require.Equal(t, 1000, s.p.win.cwnd, "a revived dead path starts from one packet")
}

func TestStoryTimeoutsBackOffUntilAnAck(t *testing.T) {
	s := newPathStory(t)
	s.send(1)
	s.now = 100 * time.Microsecond
	s.ack(s.arrive(0, false, 0))
	base := s.p.rto(&s.cfg)
	s.send(1)
	first := s.p.rtoAt - s.now
	require.Equal(t, base, first)
	s.now = s.p.rtoAt
	s.p.onTimer(s.now, &s.cfg, s, false)
	s.p.heardFrom() // a probe reply: the path is back, but nothing was acknowledged
	s.send(1)
	require.Equal(t, 2*base, s.p.rtoAt-s.now, "the second timeout in a row waits twice as long")
	s.now += 50 * time.Microsecond
	s.ack(s.arrive(s.now-50*time.Microsecond, false, 2))
	require.Zero(t, s.p.backoff, "an acknowledgement of new data ends the backoff")
}

func TestStoryReceiverWindowSlidesPastOldHoles(t *testing.T) {
	var r recvPath
	r.receive(0, 0, 0, false)
	require.Equal(t, uint64(1), r.cum)
	r.receive(2, 0, 0, false)
	r.receive(3, 0, 0, false)
	var blk wire.AckBlock
	r.block(0, 0, &blk)
	require.Equal(t, uint64(1), blk.Cum)
	require.False(t, blk.Has(1))
	require.True(t, blk.Has(2) && blk.Has(3))
	require.False(t, r.receive(3, 0, 0, false), "duplicate")
	// A packet beyond the bitmap moves it up to end there; hole 1 is kept.
	r.receive(1+wire.BitmapBits+5, 0, 0, false)
	r.block(0, 0, &blk)
	require.Equal(t, uint64(1), blk.Cum)
	require.Equal(t, uint32(5), blk.Skip)
	require.True(t, blk.Has(1+wire.BitmapBits+5))
	require.False(t, blk.Has(1+wire.BitmapBits+4))
	require.False(t, blk.Has(2), "below the bitmap: not reported")
	require.False(t, r.receive(2, 0, 0, false), "still known as a duplicate")
	// A packet wire.MaxSACKSpan ahead gives up on hole 1 (the sender,
	// whose unresolved packets span less, resolved it).
	r.receive(1+wire.MaxSACKSpan, 0, 0, false)
	r.block(0, 0, &blk)
	require.Equal(t, uint64(4), blk.Cum, "holes 1 given up, 2 and 3 received")
	require.True(t, blk.Has(1+wire.MaxSACKSpan))
	require.False(t, blk.Has(wire.MaxSACKSpan))
	require.False(t, r.receive(1+wire.BitmapBits+5, 0, 0, false), "duplicate after the ring grew")
}

// A long fat path: thousands of packets in flight, the first lost. Every
// other packet is acknowledged as it arrives, though the bitmap of each
// ACK covers only the newest 256, and the hole is declared lost.
func TestStoryLongPathBeyondTheBitmap(t *testing.T) {
	s := newPathStory(t)
	const n = 3000
	s.p.win.cwnd = (n + 1) * 1000
	s.send(n)
	require.Equal(t, uint64(n), s.p.next)
	require.Positive(t, s.p.room(), "the window, not the ring, limits the path")
	s.now = 100 * time.Microsecond
	for q := uint64(1); q < n; q += 2 {
		s.ack(s.arrive(0, false, q, q+1))
	}
	require.Len(t, s.acked, n-1)
	require.Equal(t, []uint64{0}, s.lost)
	require.Zero(t, s.p.inflight)
	require.Equal(t, uint64(n), s.p.base)
}

// A path never has wire.MaxSACKSpan packets unresolved.
func TestStoryRingBound(t *testing.T) {
	s := newPathStory(t)
	s.p.win.cwnd = 1 << 30
	for s.p.room() > 0 {
		s.send(1)
	}
	require.Equal(t, uint64(wire.MaxSACKSpan), s.p.next-s.p.base)
	require.Len(t, s.p.ring, wire.MaxSACKSpan)
}

func seqs(from, to uint64) []uint64 {
	var out []uint64
	for q := from; q < to; q++ {
		out = append(out, q)
	}
	return out
}

// A window that does not limit the sender does not grow: a path carrying
// one packet per round trip keeps its window, so that a later burst is no
// larger than what the path has carried.
func TestStoryWindowGrowsOnlyWhenItLimits(t *testing.T) {
	s := newPathStory(t)
	start := s.p.win.cwnd
	for i := range 100 {
		s.send(1)
		s.now += 100 * time.Microsecond
		s.ack(s.arrive(s.now-100*time.Microsecond, false, uint64(i)))
	}
	require.Equal(t, start, s.p.win.cwnd)
	s.send(16) // a full window: it grows again
	s.now += 100 * time.Microsecond
	s.ack(s.arrive(s.now-100*time.Microsecond, false, seqs(100, 116)...))
	require.Equal(t, 2*start, s.p.win.cwnd)
}

// Additive increase scales with the RTT: one packet per window at 10 ms
// or less, srtt/10ms packets of at least aiRefPacket bytes beyond, at most
// aiMaxStep of them and an eighth of the window.
func TestWindowAdditiveIncreaseScalesWithRTT(t *testing.T) {
	for _, c := range []struct {
		srtt time.Duration
		step int
	}{{100 * time.Microsecond, 1000}, {10 * time.Millisecond, 1000}, {100 * time.Millisecond, 10 * aiRefPacket},
		{time.Second, aiMaxStep * aiRefPacket}} {
		w := newWindow(1000, 2000, maxWindowPkts, 1)
		w.ssthresh = w.cwnd // congestion avoidance
		w.onAck(w.cwnd, c.srtt, false)
		require.Equal(t, 2000*1000+c.step, w.cwnd, "srtt %v", c.srtt)
	}
	w := newWindow(1000, 40, maxWindowPkts, 1)
	w.ssthresh = w.cwnd
	w.onAck(w.cwnd, time.Second, false)
	require.Equal(t, 45_000, w.cwnd, "at most an eighth of the window")
	w = newWindow(1000, 8, maxWindowPkts, 4)
	w.ssthresh = w.cwnd
	w.onAck(w.cwnd, time.Millisecond, false)
	require.Equal(t, 8_250, w.cwnd, "a small window shares the step among the connection's 4 paths")
}
