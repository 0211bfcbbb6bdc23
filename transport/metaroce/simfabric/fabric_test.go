package simfabric

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStoreAndForwardTiming(t *testing.T) {
	n := newTestNet(t, Config{Seed: 1})
	a, b := n.node(), n.node()
	l1 := n.link(LinkConfig{Rate: 1_000_000, Delay: time.Millisecond})
	l2 := n.link(LinkConfig{Rate: 1_000_000, Delay: time.Millisecond})
	one := n.path(a, b, l1)
	two := n.path(a, b, l1, l2)

	for i := range 3 {
		n.sendSized(one, i, 1000) // 1 ms each to serialise
	}
	n.drain()
	require.Equal(t, []time.Duration{2 * time.Millisecond, 3 * time.Millisecond, 4 * time.Millisecond}, n.arrivals())

	n.log = nil
	n.sendSized(two, 0, 1000) // 1 ms + 1 ms on l1, then again on l2
	start := n.Now()
	n.drain()
	require.Equal(t, 1, len(n.log))
	require.Equal(t, start+4*time.Millisecond, n.log[0].At)
	require.Equal(t, Delivery{From: a, To: b, Path: two, Data: n.log[0].Data, At: n.log[0].At}, n.log[0])
	requireConserved(t, n.Fabric)
}

func TestSendCopiesPacket(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.node(), n.node()
	p, _, err := n.Connect(a, b, LinkConfig{Delay: time.Microsecond})
	require.NoError(t, err)
	buf := []byte("hello")
	n.send(p, buf)
	copy(buf, "XXXXX")
	n.drain()
	require.Equal(t, "hello", string(n.log[0].Data))
}

func TestZeroDelayDeliversAtSendTime(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.node(), n.node()
	p, _, err := n.Connect(a, b, LinkConfig{})
	require.NoError(t, err)
	n.advance(5 * time.Millisecond)
	n.send(p, []byte{})
	next, ok := n.NextEventTime()
	require.True(t, ok)
	require.Equal(t, 5*time.Millisecond, next)
	n.advance(5 * time.Millisecond)
	require.Equal(t, 1, len(n.log))
	require.Equal(t, 5*time.Millisecond, n.log[0].At)
	_, ok = n.NextEventTime()
	require.False(t, ok)
}

// TestSendFromDeliver runs a ping-pong where each delivery sends the reply
// from inside the callback; all of it happens in one AdvanceTo call.
func TestSendFromDeliver(t *testing.T) {
	n := newTestNet(t, Config{})
	a, b := n.node(), n.node()
	ab, _, err := n.Connect(a, b, LinkConfig{Delay: 10 * time.Microsecond})
	require.NoError(t, err)
	ba, _, err := n.Connect(b, a, LinkConfig{Delay: 15 * time.Microsecond})
	require.NoError(t, err)

	var times []time.Duration
	echo := func(d Delivery) {
		times = append(times, d.At)
		require.Equal(t, d.At, n.Now())
		require.ErrorIs(t, n.AdvanceTo(d.At+time.Second, nil), ErrReentrant)
		if len(times) < 6 {
			back := ba
			if d.To == a {
				back = ab
			}
			require.NoError(t, n.Send(back, d.Data))
		}
	}
	n.send(ab, []byte("ping"))
	require.NoError(t, n.AdvanceTo(time.Second, echo))
	us := time.Microsecond
	require.Equal(t, []time.Duration{10 * us, 25 * us, 35 * us, 50 * us, 60 * us, 75 * us}, times)
	require.Equal(t, time.Second, n.Now())
}

func TestZeroDelayEchoIsLivelock(t *testing.T) {
	n := newTestNet(t, Config{MaxEventsPerInstant: 100})
	a, b := n.node(), n.node()
	ab, _, err := n.Connect(a, b, LinkConfig{})
	require.NoError(t, err)
	ba, _, err := n.Connect(b, a, LinkConfig{})
	require.NoError(t, err)
	n.advance(time.Millisecond)
	n.send(ab, []byte("x"))
	err = n.AdvanceTo(time.Second, func(d Delivery) {
		back := ba
		if d.To == a {
			back = ab
		}
		_ = n.Send(back, d.Data)
	})
	require.ErrorIs(t, err, ErrLivelock)
	require.Equal(t, time.Millisecond, n.Now())
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{MaxNodes: -1}, {MaxLinks: LimitMaxLinks + 1}, {MaxPaths: -5},
		{MaxHops: 65}, {MaxPacketBytes: -1}, {MaxPacketsInFlight: -1},
		{MaxFaults: LimitMaxFaults + 1}, {MaxEventsPerInstant: -1},
	} {
		_, err := New(cfg)
		require.ErrorIs(t, err, ErrConfig, "%+v", cfg)
	}
	n := newTestNet(t, Config{})
	for _, lc := range []LinkConfig{
		{Rate: -1}, {Rate: LimitRate + 1}, {Delay: -1}, {Jitter: 2 * time.Hour},
		{QueueBytes: -1}, {QueueBytes: LimitQueueBytes + 1},
		{ECNThresholdBytes: -1}, {QueueBytes: 100, ECNThresholdBytes: 100},
		{Loss: 1.5}, {Dup: -0.1}, {Corrupt: 2}, {Reorder: nanFloat()}, {ReorderDelay: -time.Second},
	} {
		_, err := n.AddLink(lc)
		require.ErrorIs(t, err, ErrConfig, "%+v", lc)
	}
	require.Empty(t, n.Stats().Links)
}

func nanFloat() float64 {
	zero := 0.0
	return zero / zero
}

func TestLimitErrors(t *testing.T) {
	n := newTestNet(t, Config{MaxNodes: 2, MaxLinks: 2, MaxPaths: 1, MaxHops: 1, MaxPacketBytes: 10, MaxPacketsInFlight: 2})
	a, b := n.node(), n.node()
	_, err := n.AddNode()
	require.ErrorIs(t, err, ErrLimit)
	l := n.link(LinkConfig{Delay: time.Millisecond})
	l2 := n.link(LinkConfig{})
	_, err = n.AddLink(LinkConfig{})
	require.ErrorIs(t, err, ErrLimit)

	_, err = n.AddPath(a, 7, l)
	require.ErrorIs(t, err, ErrNotFound)
	_, err = n.AddPath(a, b, 9)
	require.ErrorIs(t, err, ErrNotFound)
	_, err = n.AddPath(a, b)
	require.ErrorIs(t, err, ErrConfig)
	_, err = n.AddPath(a, b, l, l2)
	require.ErrorIs(t, err, ErrConfig)
	p := n.path(a, b, l)
	_, err = n.AddPath(b, a, l2)
	require.ErrorIs(t, err, ErrLimit)

	require.ErrorIs(t, n.Send(3, nil), ErrNotFound)
	require.ErrorIs(t, n.Send(-1, nil), ErrNotFound)
	require.ErrorIs(t, n.Send(p, make([]byte, 11)), ErrPacketSize)
	n.send(p, make([]byte, 10))
	n.send(p, nil)
	require.ErrorIs(t, n.Send(p, nil), ErrFull)
	require.Equal(t, int64(2), n.Stats().Paths[p].Sent.Packets)

	n.advance(time.Second)
	require.ErrorIs(t, n.AdvanceTo(time.Millisecond, nil), ErrPast)
	_, _, err = n.PathEnds(5)
	require.ErrorIs(t, err, ErrNotFound)
	from, to, err := n.PathEnds(p)
	require.NoError(t, err)
	require.Equal(t, [2]NodeID{a, b}, [2]NodeID{from, to})
	require.Equal(t, 2, len(n.log))
	require.NoError(t, n.Send(p, nil))
}

func TestInfiniteRateHasNoQueue(t *testing.T) {
	n := newTestNet(t, Config{})
	p, l, err := n.Connect(n.node(), n.node(), LinkConfig{QueueBytes: 100, ECNThresholdBytes: 10})
	require.NoError(t, err)
	for range 5 {
		n.send(p, make([]byte, 1000))
	}
	n.drain()
	require.Equal(t, 5, len(n.log))
	s := n.Stats().Links[l]
	require.Zero(t, s.Dropped().Packets+s.ECNMarked.Packets+int64(s.MaxQueueBytes))
}
