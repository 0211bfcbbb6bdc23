package metaroce

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNoPeerTimeoutAfterOwnStall has both endpoints of a connection wait
// on each other (a receive posted each way for a message not sent yet),
// then stops them both for longer than PeerTimeout, as a loaded machine
// that leaves its processes unscheduled does (bench/rss.sh's storm over
// MetaRoCE saw all eight ranks stop for 1-2 s at once): no timer runs,
// nothing is read. When they run again, each comes to its timers late; it
// must not count the time it was not running as the peer's silence, but
// probe, hear the peer answer, and go on: no connection fails, and the
// receives complete once their messages are sent.
func TestNoPeerTimeoutAfterOwnStall(t *testing.T) {
	n := newTestNet(t, Config{Paths: 4})
	a, b := n.connect()
	require.NoError(t, n.eps[0].PostRecv(n.now, a, 1, 1, make([]byte, 8)))
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 2, 2, make([]byte, 8)))
	n.runFor(500 * time.Millisecond)
	n.now += DefaultPeerTimeout + 500*time.Millisecond // both stopped
	n.runFor(3 * DefaultPeerTimeout)
	for i := range n.eps {
		for _, ev := range n.events[i] {
			require.NotEqual(t, EventClosed, ev.Kind, "endpoint %d: %v", i, ev.Err)
			require.NoError(t, ev.Err, "endpoint %d %v", i, ev.Kind)
		}
		require.Positive(t, n.eps[i].Stats().LateRuns, "endpoint %d", i)
		require.GreaterOrEqual(t, n.eps[i].Stats().Late, DefaultPeerTimeout, "endpoint %d", i)
	}
	exchangeBothWays(t, n, a, b)
}

// TestPeerTimeoutAfterOwnStall is the same stall, after which endpoint 0
// no longer answers (its datagrams are lost): endpoint 1, waiting on it,
// still fails the connection with a PeerTimeoutError, within PeerTimeout
// of the stall's end; but not at once, as it would if the stall counted
// as silence (only the silence before the stall, at most a few keepalive
// periods, adds to the time after it).
func TestPeerTimeoutAfterOwnStall(t *testing.T) {
	n := newTestNet(t, Config{Paths: 4})
	_, b := n.connect()
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 2, 2, make([]byte, 8)))
	n.runFor(500 * time.Millisecond)
	n.now += DefaultPeerTimeout + 500*time.Millisecond
	resumed := n.now
	n.drop = func(from, path int, b []byte) bool { return from == 0 }
	at := awaitPeerTimeout(t, n)
	require.GreaterOrEqual(t, at-resumed, DefaultPeerTimeout/2, "failed too soon after the stall")
	require.LessOrEqual(t, at-resumed, DefaultPeerTimeout+DefaultPeerTimeout/8)
}

// muteAndWait connects a testNet, posts a receive on endpoint 1 from
// endpoint 0 and then drops every datagram both ways: endpoint 1 waits on
// a peer it no longer hears. It returns the net and when the wait (the
// silence that counts) began.
func muteAndWait(t *testing.T) (*testNet, time.Duration) {
	n := newTestNet(t, Config{Paths: 2})
	_, b := n.connect()
	from := n.now // the wait begins: the silence counts from here
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 2, 2, make([]byte, 8)))
	n.drop = func(int, int, []byte) bool { return true }
	return n, from
}

// runLate drives endpoint 1's timers alone, each handled late by late,
// until its connection fails or limit passes; it returns when it failed.
func runLate(t *testing.T, n *testNet, late, limit time.Duration) time.Duration {
	end := n.now + limit
	for n.now < end {
		next, ok := n.eps[1].NextTimeout()
		require.True(t, ok)
		n.now = max(n.now, next+late)
		n.eps[1].HandleTimeout(n.now)
		n.flush()
		n.flights = nil // nothing arrives: the peer is mute
		for _, ev := range n.events[1] {
			if ev.Kind == EventClosed {
				require.ErrorIs(t, ev.Err, ErrPeerTimeout)
				return n.now
			}
		}
	}
	t.Fatalf("no PeerTimeoutError within %v", limit)
	return 0
}

// TestLateJitterCreditsNothing: timers that each run a little late (here
// by 9 ms, within lateSlackMax) are ordinary jitter, not time the
// endpoint was stopped: they credit the peer nothing, so a mute peer is
// still named within PeerTimeout plus one keepalive period of the silence
// and its jitter. Before lateSlack, every such run moved the peer's
// last-heard time on by its lateness.
func TestLateJitterCreditsNothing(t *testing.T) {
	n, from := muteAndWait(t)
	at := runLate(t, n, 9*time.Millisecond, 3*DefaultPeerTimeout)
	st := n.eps[1].Stats()
	require.Zero(t, st.LateRuns, "jitter credited as lateness")
	require.Zero(t, st.Late)
	require.LessOrEqual(t, at-from, DefaultPeerTimeout+DefaultPeerTimeout/8+9*time.Millisecond)
}

// TestLateCreditsTheExcess: one timer run 500 ms late credits the
// lateness beyond lateSlack, once; the mute peer is named that much later.
func TestLateCreditsTheExcess(t *testing.T) {
	n, from := muteAndWait(t)
	next, ok := n.eps[1].NextTimeout()
	require.True(t, ok)
	n.now = next + 500*time.Millisecond
	n.eps[1].HandleTimeout(n.now)
	n.flush()
	n.flights = nil
	st := n.eps[1].Stats()
	want := 500*time.Millisecond - n.eps[1].lateSlack()
	require.Equal(t, int64(1), st.LateRuns)
	require.Equal(t, want, st.Late)
	at := runLate(t, n, 0, 3*DefaultPeerTimeout)
	require.GreaterOrEqual(t, at-from, DefaultPeerTimeout+want-DefaultPeerTimeout/8)
	require.LessOrEqual(t, at-from, DefaultPeerTimeout+want+DefaultPeerTimeout/8)
}

// TestSilenceDue: SilenceDue is false while the mute peer's silence is
// shorter than PeerTimeout and true at the timer that would fail the
// connection; it fails nothing by itself; a datagram from the peer,
// handled then (as the driver's drain does), ends the silence.
func TestSilenceDue(t *testing.T) {
	n, from := muteAndWait(t)
	for {
		next, ok := n.eps[1].NextTimeout()
		require.True(t, ok)
		if n.eps[1].SilenceDue(next) {
			n.now = next
			break
		}
		n.now = next
		n.eps[1].HandleTimeout(n.now)
		n.flush()
		n.flights = nil
		require.Less(t, n.now-from, 2*DefaultPeerTimeout, "SilenceDue never true")
	}
	require.GreaterOrEqual(t, n.now-from, DefaultPeerTimeout)
	require.False(t, n.has(1, EventClosed), "SilenceDue failed the connection")
	n.drop = nil
	c := n.eps[0].order[0].id
	require.NoError(t, n.eps[0].Send(n.now, c, 2, 2, pattern(8, 2)))
	n.flush()
	require.NotEmpty(t, n.flights)
	for _, f := range n.flights {
		if f.to == 1 {
			n.eps[1].HandleDatagram(n.now, f.path, false, f.data)
		}
	}
	n.flights = nil
	require.False(t, n.eps[1].SilenceDue(n.now))
	n.eps[1].HandleTimeout(n.now)
	require.False(t, n.has(1, EventClosed))
}

// TestLateReadsWithoutCrediting: Late reports the lateness beyond
// lateSlack of now against the earliest timer NextTimeout returned, and
// changes nothing, however often it is asked; the input that follows
// credits it once.
func TestLateReadsWithoutCrediting(t *testing.T) {
	n, _ := muteAndWait(t)
	ep := n.eps[1]
	next, ok := ep.NextTimeout()
	require.True(t, ok)
	require.Zero(t, ep.Late(next-time.Millisecond), "early")
	require.Zero(t, ep.Late(next+ep.lateSlack()), "within jitter")
	at := next + 300*time.Millisecond
	want := 300*time.Millisecond - ep.lateSlack()
	require.Equal(t, want, ep.Late(at))
	require.Equal(t, want, ep.Late(at), "Late changed the endpoint")
	require.Zero(t, ep.Stats().LateRuns, "Late credited the lateness")
	ep.HandleTimeout(at)
	require.Equal(t, int64(1), ep.Stats().LateRuns)
	require.Equal(t, want, ep.Stats().Late)
}

// TestNoPeerTimeoutAfterOneSidedStall: both endpoints wait on each other,
// then endpoint 0 alone stops for 1.8 s (less than PeerTimeout), as one
// rank of a loaded host left unscheduled: it handles nothing and sends
// nothing. Neither fails the connection, and the receives complete once
// their messages are sent. The stop begins at several phases of the
// keepalive probes. When endpoint 1 counted the silence from the last
// packet it heard, not from its first probe left unanswered (ask.go), it
// failed the connection at the first phase (0s): it had heard nothing for
// the keepalive period before the stop.
func TestNoPeerTimeoutAfterOneSidedStall(t *testing.T) {
	for k := range 10 {
		phase := time.Duration(k) * DefaultPeerTimeout / 80
		t.Run(phase.String(), func(t *testing.T) {
			n, a, b := waitingPair(t, phase)
			n.frozen[0] = n.now + 1800*time.Millisecond
			n.runFor(1800*time.Millisecond + 3*DefaultPeerTimeout)
			for i := range n.eps {
				for _, ev := range n.events[i] {
					require.NotEqual(t, EventClosed, ev.Kind, "endpoint %d: %v", i, ev.Err)
					require.NoError(t, ev.Err, "endpoint %d %v", i, ev.Kind)
				}
			}
			exchangeBothWays(t, n, a, b)
		})
	}
}

// TestPeerTimeoutWhenStallNeverEnds: the same stop, at the same phases,
// never ends (the process is gone with its host): endpoint 1 still fails
// the connection with a PeerTimeoutError, within PeerTimeout plus a tenth
// (askAfter) of the last datagram it was handed, and not before
// PeerTimeout after it.
func TestPeerTimeoutWhenStallNeverEnds(t *testing.T) {
	for k := range 10 {
		phase := time.Duration(k) * DefaultPeerTimeout / 80
		t.Run(phase.String(), func(t *testing.T) {
			n, _, _ := waitingPair(t, phase)
			n.frozen[0] = n.now + time.Hour
			at := awaitPeerTimeout(t, n)
			silent := at - n.heard[1]
			require.GreaterOrEqual(t, silent, DefaultPeerTimeout, "failed too soon")
			require.LessOrEqual(t, silent, DefaultPeerTimeout+DefaultPeerTimeout/10)
		})
	}
}

// exchangeBothWays sends 8 bytes each way over a (endpoint 0's side) and b
// (endpoint 1's), to the receives posted with tags 1 and 2, and runs n
// until both are done: the connection works after a stall.
func exchangeBothWays(t *testing.T, n *testNet, a, b ConnID) {
	t.Helper()
	require.NoError(t, n.eps[1].Send(n.now, b, 1, 1, pattern(8, 1)))
	require.NoError(t, n.eps[0].Send(n.now, a, 2, 2, pattern(8, 2)))
	n.runUntil(func() bool {
		_, ok0 := n.done(0, EventRecvDone, 1, 1)
		_, ok1 := n.done(1, EventRecvDone, 2, 2)
		return ok0 && ok1
	}, time.Second)
}

// awaitPeerTimeout runs n until endpoint 1 closes its connection, which
// must be for ErrPeerTimeout, within 2 PeerTimeouts, and returns when.
func awaitPeerTimeout(t *testing.T, n *testNet) time.Duration {
	t.Helper()
	var at time.Duration
	n.runUntil(func() bool {
		for _, ev := range n.events[1] {
			if ev.Kind == EventClosed {
				require.ErrorIs(t, ev.Err, ErrPeerTimeout)
				at = n.now
				return true
			}
		}
		return false
	}, 2*DefaultPeerTimeout)
	return at
}

// waitingPair connects a testNet whose endpoints each post a receive from
// the other (tags 1 and 2, 8 bytes), and runs it 1 s plus phase (a phase
// of the keepalive probes): both wait on a live peer.
func waitingPair(t *testing.T, phase time.Duration) (*testNet, ConnID, ConnID) {
	n := newTestNet(t, Config{Paths: 4})
	a, b := n.connect()
	require.NoError(t, n.eps[0].PostRecv(n.now, a, 1, 1, make([]byte, 8)))
	require.NoError(t, n.eps[1].PostRecv(n.now, b, 2, 2, make([]byte, 8)))
	n.runFor(time.Second + phase)
	return n, a, b
}
