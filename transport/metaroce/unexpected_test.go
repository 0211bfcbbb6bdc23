package metaroce

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// With ReportUnexpected, a message that arrives without a receive is
// reported once, with its key and length; an empty receive posted for it
// discards it, so its sender completes and it stops holding the budget.
// Without the option no such event appears.
func TestReportUnexpected(t *testing.T) {
	for _, report := range []bool{false, true} {
		n := newTestNet(t, Config{ReportUnexpected: report, UnexpectedBytes: 64 << 10})
		a, b := n.connect()
		require.NoError(t, n.eps[0].Send(n.now, a, 7, 8, pattern(1<<20, 1)))
		n.runFor(2 * time.Millisecond)
		var got []Event
		for _, ev := range n.events[1] {
			if ev.Kind == EventUnexpected {
				got = append(got, ev)
			}
		}
		if !report {
			require.Empty(t, got)
			continue
		}
		require.Len(t, got, 1)
		require.Equal(t, Event{Kind: EventUnexpected, Conn: b, Peer: 0, Stream: 7, Msg: 8, N: 1 << 20}, got[0])
		require.NoError(t, n.eps[1].PostRecv(n.now, b, 7, 8, nil))
		n.runUntil(func() bool { _, ok := n.done(0, EventSendDone, 7, 8); return ok }, time.Second)
		ev, _ := n.done(1, EventRecvDone, 7, 8)
		require.ErrorIs(t, ev.Err, ErrTruncated)
		cs, _, _ := n.eps[1].ConnStats(b, nil)
		require.Zero(t, cs.UnexpectedBytes)
		require.Equal(t, "unexpected", EventUnexpected.String())
	}
}
