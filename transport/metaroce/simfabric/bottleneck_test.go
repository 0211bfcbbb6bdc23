package simfabric

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSharedBottleneck: 16 senders, each on its own 1 GB/s access link,
// share one 1 GB/s bottleneck into a receiver. Each offers 1 GB/s for 5 ms.
// The bottleneck stays busy, so once saturated it delivers one 1000-byte
// packet every microsecond exactly; all loss is tail drop at the
// bottleneck; every sender gets at least 3/4 of a fair share.
func TestSharedBottleneck(t *testing.T) {
	const senders, size = 16, 1000
	n := newTestNet(t, Config{Seed: 5})
	rx := n.node()
	bottleneck := n.link(LinkConfig{Rate: 1e9, Delay: 2 * time.Microsecond, QueueBytes: 64 << 10, ECNThresholdBytes: 16 << 10})
	paths := make([]PathID, senders)
	access := make([]LinkID, senders)
	for i := range paths {
		// Without jitter the senders would be phase-locked: all 16 packets
		// reach the bottleneck at the same instant, in path order, and the
		// first one always takes the only free slot.
		access[i] = n.link(LinkConfig{Rate: 1e9, Delay: time.Microsecond, Jitter: 2 * time.Microsecond})
		paths[i] = n.path(n.node(), rx, access[i], bottleneck)
	}
	for n.Now() < 5*ms {
		for _, p := range paths {
			n.sendSized(p, 0, size)
		}
		n.advance(n.Now() + time.Microsecond)
	}
	n.drain()

	s := n.Stats()
	b := s.Links[bottleneck]
	require.Equal(t, int64(len(n.log)), b.Delivered.Packets)
	require.Equal(t, b.Sent.Packets, b.Delivered.Packets+b.DroppedQueueFull.Packets)
	require.Greater(t, b.DroppedQueueFull.Packets, int64(senders*5000*3/4))
	require.LessOrEqual(t, b.MaxQueueBytes, 64<<10)
	require.Greater(t, b.ECNMarked.Packets, int64(0))
	// Saturated: arrivals 1 µs apart from the first to the last.
	for i := 1; i < len(n.log); i++ {
		if gap := n.log[i].At - n.log[i-1].At; gap != time.Microsecond {
			t.Fatalf("delivery %d came %v after the previous one, want 1µs", i, gap)
		}
	}
	var total int64
	for i, p := range paths {
		require.Zero(t, s.Links[access[i]].Dropped().Packets)
		got := s.Paths[p].Delivered.Packets
		require.Greater(t, got, b.Delivered.Packets/senders*3/4, "path %d: unfair share", i)
		total += got
	}
	require.Equal(t, b.Delivered.Packets, total)
	requireConserved(t, n.Fabric)
}

// TestMultipathOwnLinks: two paths between the same nodes over their own
// links have independent queues and delays.
func TestMultipathOwnLinks(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.node(), n.node()
	fast, _, err := n.Connect(a, b, LinkConfig{Rate: 1e9, Delay: 10 * time.Microsecond})
	require.NoError(t, err)
	slow, _, err := n.Connect(a, b, LinkConfig{Rate: 1e8, Delay: 50 * time.Microsecond})
	require.NoError(t, err)
	for i := range 3 {
		n.sendSized(slow, 10+i, 1000)
		n.sendSized(fast, i, 1000)
	}
	n.drain()
	var got []string
	for _, d := range n.log {
		got = append(got, fmt.Sprintf("%d@%v", seqOf(t, d), d.At))
	}
	require.Equal(t, []string{"0@11µs", "1@12µs", "2@13µs", "10@60µs", "11@70µs", "12@80µs"}, got)
}
