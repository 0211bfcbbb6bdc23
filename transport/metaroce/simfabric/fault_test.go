package simfabric

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// sendEvery sends one 100-byte packet on p every step until end, numbered
// by send time in steps.
func (n *testNet) sendEvery(p PathID, step, end time.Duration) {
	n.t.Helper()
	for n.Now() < end {
		n.sendSized(p, int(n.Now()/step), 100)
		n.advance(n.Now() + step)
	}
}

// TestCutAndRestoreAtExactTimes cuts a link with 500 µs of propagation at
// 10 ms and restores it at 20 ms: packets sent in [9.5 ms, 20 ms) are lost,
// the ones in flight at the cut included.
func TestCutAndRestoreAtExactTimes(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.node(), n.node()
	p, l, err := n.Connect(a, b, LinkConfig{Delay: 500 * time.Microsecond})
	require.NoError(t, err)
	n.schedule(Fault{At: 10 * ms, Link: l, Kind: Cut}, Fault{At: 20 * ms, Link: l, Kind: Restore})
	step := 100 * time.Microsecond
	n.sendEvery(p, step, 30*ms)
	n.drain()

	var got []int
	for _, d := range n.log {
		got = append(got, seqOf(t, d))
	}
	var want []int
	for i := range 300 {
		if i < 95 || i >= 200 {
			want = append(want, i)
		}
	}
	require.Equal(t, want, got)
	s := n.Stats().Links[l]
	require.Equal(t, int64(105), s.DroppedCut.Packets)
	require.Equal(t, int64(5), s.Sent.Packets-s.Delivered.Packets-100, "5 were in flight at the cut")
	_, cut, err := n.LinkConfig(l)
	require.NoError(t, err)
	require.False(t, cut)
	requireConserved(t, n.Fabric)
}

// TestCutDropsQueuedPackets fills a slow link's queue, cuts it, and checks
// that nothing queued before the cut survives, while packets sent after
// the restore pass with an empty queue.
func TestCutDropsQueuedPackets(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.node(), n.node()
	p, l, err := n.Connect(a, b, LinkConfig{Rate: 1_000_000})
	require.NoError(t, err)
	for i := range 10 {
		n.sendSized(p, i, 1000)
	}
	n.advance(2500 * time.Microsecond)
	n.schedule(Fault{At: n.Now(), Link: l, Kind: Cut}) // at Now: applies at once
	_, cut, _ := n.LinkConfig(l)
	require.True(t, cut)
	n.send(p, make([]byte, 1000)) // enters a cut link
	n.schedule(Fault{At: 3 * ms, Link: l, Kind: Restore})
	n.advance(3 * ms)
	n.sendSized(p, 99, 1000)
	n.drain()
	require.Equal(t, []time.Duration{1 * ms, 2 * ms, 4 * ms}, n.arrivals())
	require.Equal(t, 99, seqOf(t, n.log[2]))
	require.Equal(t, int64(9), n.Stats().Paths[p].DroppedCut.Packets)
}

func TestOneWayCut(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.node(), n.node()
	ab, lab, err := n.Connect(a, b, LinkConfig{Delay: 100 * time.Microsecond})
	require.NoError(t, err)
	ba, _, err := n.Connect(b, a, LinkConfig{Delay: 100 * time.Microsecond})
	require.NoError(t, err)
	n.schedule(Fault{At: 0, Link: lab, Kind: Cut})
	n.send(ab, []byte("lost"))
	n.send(ba, []byte("passes"))
	n.drain()
	require.Equal(t, 1, len(n.log))
	require.Equal(t, Delivery{From: b, To: a, Path: ba, Data: []byte("passes"), At: 100 * time.Microsecond}, n.log[0])
}

// TestFaultBeforePacketAtSameInstant: a cut at T drops a packet that would
// arrive at T, and a restore at T lets a packet entering at T through.
func TestFaultBeforePacketAtSameInstant(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.node(), n.node()
	p, l, err := n.Connect(a, b, LinkConfig{Delay: ms})
	require.NoError(t, err)
	n.send(p, []byte("x")) // would arrive at 1 ms
	n.schedule(Fault{At: ms, Link: l, Kind: Cut}, Fault{At: 2 * ms, Link: l, Kind: Restore})
	n.advance(2 * ms)
	n.send(p, []byte("y"))
	n.drain()
	require.Equal(t, 1, len(n.log))
	require.Equal(t, "y", string(n.log[0].Data))
	require.Equal(t, 3*ms, n.log[0].At)
}

func TestSetConfigChangesLossAndRate(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.node(), n.node()
	base := LinkConfig{Rate: 1_000_000}
	p, l, err := n.Connect(a, b, base)
	require.NoError(t, err)
	lossy, fast := base, base
	lossy.Loss = 1
	fast.Rate = 10_000_000
	fast.ECNThresholdBytes = 1
	n.schedule(
		Fault{At: 5 * ms, Link: l, Kind: SetConfig, Config: lossy},
		Fault{At: 10 * ms, Link: l, Kind: SetConfig, Config: fast},
	)
	n.sendEvery(p, ms, 15*ms) // 100 bytes: 100 µs at 1 MB/s, 10 µs at 10 MB/s
	n.drain()
	var got []time.Duration
	for _, d := range n.log {
		got = append(got, d.At-time.Duration(seqOf(t, d))*ms)
	}
	us := time.Microsecond
	require.Equal(t, []time.Duration{100 * us, 100 * us, 100 * us, 100 * us, 100 * us,
		10 * us, 10 * us, 10 * us, 10 * us, 10 * us}, got)
	require.Equal(t, int64(5), n.Stats().Links[l].DroppedLoss.Packets)
	cfg, _, err := n.LinkConfig(l)
	require.NoError(t, err)
	require.Equal(t, int64(10_000_000), cfg.Rate)
	require.Equal(t, DefaultQueueBytes, cfg.QueueBytes)
}

func TestScheduleErrors(t *testing.T) {
	n := newTestNet(t, Config{MaxFaults: 2})
	_, l, err := n.Connect(n.node(), n.node(), LinkConfig{})
	require.NoError(t, err)
	n.advance(ms)
	require.ErrorIs(t, n.Schedule(Fault{At: 0, Link: l, Kind: Cut}), ErrPast)
	require.ErrorIs(t, n.Schedule(Fault{At: 2 * ms, Link: 5, Kind: Cut}), ErrNotFound)
	require.ErrorIs(t, n.Schedule(Fault{At: 2 * ms, Link: l}), ErrConfig)
	require.ErrorIs(t, n.Schedule(Fault{At: 2 * ms, Link: l, Kind: SetConfig, Config: LinkConfig{Loss: 2}}), ErrConfig)
	// A bad fault anywhere in the batch schedules none of it.
	require.Error(t, n.Schedule(Fault{At: 2 * ms, Link: l, Kind: Cut}, Fault{At: 2 * ms, Link: 9, Kind: Cut}))
	_, ok := n.NextEventTime()
	require.False(t, ok)
	n.schedule(Fault{At: 2 * ms, Link: l, Kind: Cut}, Fault{At: 3 * ms, Link: l, Kind: Restore})
	require.ErrorIs(t, n.Schedule(Fault{At: 4 * ms, Link: l, Kind: Cut}), ErrLimit)
	next, ok := n.NextEventTime()
	require.True(t, ok)
	require.Equal(t, 2*ms, next)
	_, _, err = n.LinkConfig(-1)
	require.ErrorIs(t, err, ErrNotFound)
	require.Equal(t, "cut restore set-config FaultKind(9)", Cut.String()+" "+Restore.String()+" "+SetConfig.String()+" "+FaultKind(9).String())
}
