package simfabric

import (
	"bytes"
	"math"
	"math/bits"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSaturatingSenderSeesExactRate keeps a link's queue non-empty for one
// virtual second with a rate that does not divide a second evenly: the
// delivered bytes are exactly what the rate allows, with no rounding drift.
func TestSaturatingSenderSeesExactRate(t *testing.T) {
	const rate, size = 12_345_677, 1500
	n := newTestNet(t, Config{})
	a, b := n.node(), n.node()
	p, _, err := n.Connect(a, b, LinkConfig{Rate: rate, QueueBytes: 64 * size})
	require.NoError(t, err)
	for i := range 10 {
		n.sendSized(p, i, size)
	}
	delivered := 0
	require.NoError(t, n.AdvanceTo(time.Second, func(d Delivery) {
		delivered++
		require.NoError(t, n.Send(p, d.Data)) // one in for each one out
	}))
	// Packet k (from 1) finishes at floor(k*size*1e9/rate) ns.
	want := int(int64(time.Second) * rate / (size * int64(time.Second)))
	require.Equal(t, want, delivered)
	s := n.Stats().Links[0]
	require.Zero(t, s.Dropped().Packets)
	require.Equal(t, 10*size, s.MaxQueueBytes)
}

func TestRateMatchesExactFinishTimes(t *testing.T) {
	const rate, size = 3_000_000_000, 1000 // 333.33 ns per packet
	n := newTestNet(t, Config{})
	a, b := n.node(), n.node()
	p, _, err := n.Connect(a, b, LinkConfig{Rate: rate})
	require.NoError(t, err)
	for i := range 6 {
		n.sendSized(p, i, size)
	}
	n.drain()
	require.Equal(t, []time.Duration{333, 666, 1000, 1333, 1666, 2000}, n.arrivals())
}

func TestQueueBoundTailDrop(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.node(), n.node()
	p, l, err := n.Connect(a, b, LinkConfig{Rate: 1_000_000, QueueBytes: 10_000})
	require.NoError(t, err)
	for i := range 20 {
		n.sendSized(p, i, 1000)
	}
	s := n.Stats().Links[l]
	require.Equal(t, Count{Packets: 10, Bytes: 10_000}, s.DroppedQueueFull)
	require.Equal(t, 10_000, s.MaxQueueBytes)

	// After 2.5 ms two packets have left and the third is half sent: there
	// is room for exactly two more.
	n.advance(2500 * time.Microsecond)
	for i := range 3 {
		n.sendSized(p, 100+i, 1000)
	}
	n.drain()
	s = n.Stats().Links[l]
	require.Equal(t, int64(11), s.DroppedQueueFull.Packets)
	require.Equal(t, int64(12), s.Delivered.Packets)
	for i, d := range n.log {
		want := i
		if i >= 10 {
			want = 100 + i - 10
		}
		require.Equal(t, want, seqOf(t, d))
	}
	// A packet larger than the queue can never pass.
	require.NoError(t, n.Send(p, make([]byte, 10_001)))
	require.Equal(t, int64(12), n.Stats().Paths[p].DroppedQueueFull.Packets)
	requireConserved(t, n.Fabric)
}

func TestECNMarksAboveThreshold(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.node(), n.node()
	p, l, err := n.Connect(a, b, LinkConfig{Rate: 1_000_000, ECNThresholdBytes: 3000})
	require.NoError(t, err)
	for i := range 10 {
		n.sendSized(p, i, 1000) // packet i finds i*1000 bytes ahead of it
	}
	n.drain()
	var ce []bool
	for _, d := range n.log {
		ce = append(ce, d.CE)
	}
	require.Equal(t, []bool{false, false, false, false, true, true, true, true, true, true}, ce)
	require.Equal(t, Count{Packets: 6, Bytes: 6000}, n.Stats().Links[l].ECNMarked)
	require.Equal(t, Count{Packets: 6, Bytes: 6000}, n.Stats().Paths[p].ECNMarked)

	// Once the queue has drained, packets pass unmarked again.
	n.log = nil
	n.sendSized(p, 0, 1000)
	n.drain()
	require.False(t, n.log[0].CE)
}

// TestLossDupCorruptRates sends many packets through a lossy link; for this
// fixed seed the counts are deterministic, and the bounds (5 standard
// deviations) check that the probabilities mean what they say.
func TestLossDupCorruptRates(t *testing.T) {
	const packets = 50_000
	n := newTestNet(t, Config{Seed: 42})
	a, b := n.node(), n.node()
	p, l, err := n.Connect(a, b, LinkConfig{Delay: time.Microsecond, Loss: 0.05, Dup: 0.02, Corrupt: 0.03})
	require.NoError(t, err)
	sent := make([]byte, 64)
	for i := range packets {
		sent[0] = byte(i)
		n.send(p, sent)
		n.advance(n.Now() + time.Microsecond)
	}
	n.drain()
	s := n.Stats().Links[l]
	requireNear(t, "loss", s.DroppedLoss.Packets, packets, 0.05)
	survivors := packets - s.DroppedLoss.Packets
	requireNear(t, "dup", s.Duplicated.Packets, survivors, 0.02)
	requireNear(t, "corrupt", s.Corrupted.Packets, survivors, 0.03)
	require.Equal(t, survivors+s.Duplicated.Packets, int64(len(n.log)))
	require.Equal(t, s, n.Stats().Paths[p].withoutQueue(s.MaxQueueBytes))

	flipped := 0
	for _, d := range n.log {
		sent[0] = d.Data[0] // the first byte varies; compare only the rest
		diff := 0
		for i := range d.Data {
			diff += bits.OnesCount8(d.Data[i] ^ sent[i])
		}
		require.LessOrEqual(t, diff, 1)
		flipped += diff
	}
	// Bit flips in byte 0 are invisible here, so allow for them (1/64).
	require.InDelta(t, float64(s.Corrupted.Packets), float64(flipped), float64(s.Corrupted.Packets)/16)
	requireConserved(t, n.Fabric)
}

// TestLossTrain: with LossTrain 4, the packets a path sends at one
// instant are lost in trains of up to 4 by one draw: 10 packets at an
// instant form trains of 4, 4 and 2, each lost whole or kept whole, at
// the rate Loss per train; a packet of another path, or a later instant,
// starts a new train.
func TestLossTrain(t *testing.T) {
	const bursts = 5_000
	n := newTestNet(t, Config{Seed: 7})
	a, b := n.node(), n.node()
	l := n.link(LinkConfig{Delay: time.Microsecond, Loss: 0.05, LossTrain: 4})
	p := n.path(a, b, l)
	q := n.path(a, b, l)
	var lostTrains, lostPackets int64
	for i := range bursts {
		for k := range 10 {
			n.sendSized(p, k, 64)
		}
		n.sendSized(q, 100, 64) // another path's packet: its own draw
		n.sendSized(p, 10, 64)  // after it, a new train of p
		n.advance(n.Now() + time.Microsecond)
		got := map[int]bool{}
		for _, d := range n.log {
			got[seqOf(t, d)] = true
		}
		n.log = n.log[:0]
		for _, train := range [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}, {10}} {
			for _, k := range train[1:] {
				require.Equal(t, got[train[0]], got[k], "burst %d: packets %d and %d of one train", i, train[0], k)
			}
			if !got[train[0]] {
				lostTrains++
				lostPackets += int64(len(train))
			}
		}
	}
	requireNear(t, "p's trains lost", lostTrains, 4*bursts, 0.05)
	requireNear(t, "q's packets lost", n.Stats().Paths[q].DroppedLoss.Packets, bursts, 0.05)
	require.Equal(t, lostPackets, n.Stats().Paths[p].DroppedLoss.Packets)
	requireConserved(t, n.Fabric)
}

// withoutQueue returns s with MaxQueueBytes set, so path and link stats of a
// one-link path compare equal.
func (s Stats) withoutQueue(q int) Stats {
	s.MaxQueueBytes = q
	return s
}

func requireNear(t *testing.T, what string, got, trials int64, p float64) {
	t.Helper()
	mean := float64(trials) * p
	sigma := math.Sqrt(float64(trials) * p * (1 - p))
	require.InDelta(t, mean, float64(got), 5*sigma, "%s: %d of %d, want p=%v", what, got, trials, p)
}

func TestJitterKeepsOrderWithinBounds(t *testing.T) {
	n := newTestNet(t, Config{Seed: 7})
	a, b := n.node(), n.node()
	p, _, err := n.Connect(a, b, LinkConfig{Delay: time.Millisecond, Jitter: 500 * time.Microsecond})
	require.NoError(t, err)
	sentAt := map[int]time.Duration{}
	for i := range 2000 {
		sentAt[i] = n.Now()
		n.sendSized(p, i, 100)
		n.advance(n.Now() + 10*time.Microsecond)
	}
	n.drain()
	require.Equal(t, 2000, len(n.log))
	distinct := map[time.Duration]bool{}
	for i, d := range n.log {
		require.Equal(t, i, seqOf(t, d))
		delay := d.At - sentAt[i]
		require.GreaterOrEqual(t, delay, time.Millisecond)
		require.LessOrEqual(t, delay, 1500*time.Microsecond)
		distinct[delay] = true
	}
	require.Greater(t, len(distinct), 100, "jitter should vary the delay")
}

func TestReorder(t *testing.T) {
	n := newTestNet(t, Config{Seed: 3})
	a, b := n.node(), n.node()
	p, l, err := n.Connect(a, b, LinkConfig{Rate: 1_000_000_000, Delay: 2 * time.Microsecond,
		Reorder: 0.1, ReorderDelay: 20 * time.Microsecond, QueueBytes: 16 << 20})
	require.NoError(t, err)
	const packets = 10_000
	for i := range packets {
		n.sendSized(p, i, 1000) // 1 µs each; a reordered one is passed by ~20
	}
	n.drain()
	require.Equal(t, packets, len(n.log))
	late := 0
	maxSeen := -1
	for _, d := range n.log {
		s := seqOf(t, d)
		if s < maxSeen {
			late++
		}
		maxSeen = max(maxSeen, s)
	}
	requireNear(t, "reordered", int64(late), packets, 0.1)
	require.Zero(t, n.Stats().Links[l].Dropped().Packets)

	// Without Reorder the same link keeps order.
	n2 := newTestNet(t, Config{Seed: 3})
	p2, _, err := n2.Connect(n2.node(), n2.node(), LinkConfig{Rate: 1_000_000_000, Delay: 2 * time.Microsecond})
	require.NoError(t, err)
	for i := range 100 {
		n2.sendSized(p2, i, 1000)
	}
	n2.drain()
	for i, d := range n2.log {
		require.Equal(t, i, seqOf(t, d))
	}
}

func TestCorruptionLeavesDuplicatesIndependent(t *testing.T) {
	n := newTestNet(t, Config{Seed: 11})
	a, b := n.node(), n.node()
	l1 := n.link(LinkConfig{Dup: 1})
	l2 := n.link(LinkConfig{Corrupt: 1})
	p := n.path(a, b, l1, l2)
	orig := bytes.Repeat([]byte{0xAA}, 32)
	n.send(p, orig)
	n.drain()
	require.Equal(t, 2, len(n.log))
	require.NotEqual(t, n.log[0].Data, orig)
	require.NotEqual(t, n.log[1].Data, orig)
	require.Equal(t, bytes.Repeat([]byte{0xAA}, 32), orig)
	s := n.Stats().Paths[p]
	require.Equal(t, int64(1), s.Duplicated.Packets)
	require.Equal(t, int64(2), s.Corrupted.Packets)
	require.Equal(t, int64(2), s.Delivered.Packets)
}
