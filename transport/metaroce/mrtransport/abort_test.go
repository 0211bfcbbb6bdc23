package mrtransport

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// TestLateMessagesOfEndedOpDiscarded checks that messages of an operation
// that ended here, arriving before or after the end, are discarded rather
// than held for a receive that will never come: held, they would fill the
// connection's message window (here the smallest, 16) and the budget for
// unexpected bytes, and stall every later message.
func TestLateMessagesOfEndedOpDiscarded(t *testing.T) {
	const window = 16
	cfg := Config{Core: metaroce.Config{MsgWindow: window, UnexpectedBytes: 1 << 20}}
	eps := newTestWorld(t, 2, cfg)
	ctx := testCtx(t)
	x := transport.OpKey{Comm: 5, Op: 1}

	// Messages that arrive before the end: received unexpected, then
	// discarded when rank 1 ends x.
	var sends []transport.Request
	for i := range window / 2 {
		sends = append(sends, eps[0].Send(1, transport.Tag{OpKey: x, Seq: uint32(i)}, transporttest.Pattern(1000, 1)))
	}
	for _, s := range sends {
		_, err := s.Wait(ctx)
		require.NoError(t, err)
	}
	eps[1].Abort(x, nil, errors.New("gave up"))
	// And messages that arrive after it.
	sends = sends[:0]
	for i := range 2 * window {
		sends = append(sends, eps[0].Send(1, transport.Tag{OpKey: x, Seq: uint32(100 + i)}, transporttest.Pattern(40000, 2)))
	}
	for _, s := range sends {
		_, err := s.Wait(ctx)
		require.NoError(t, err, "a send to a rank that ended the operation completes")
	}
	// Later operations flow through the window.
	for i := range 2 * window {
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 5, Op: 2}, Seq: uint32(i)}
		s := eps[0].Send(1, tag, transporttest.Pattern(100, uint64(i)))
		buf := make([]byte, 100)
		_, err := eps[1].Recv(0, tag, buf).Wait(ctx)
		require.NoError(t, err)
		require.NoError(t, transporttest.Verify(buf, uint64(i)))
		_, err = s.Wait(ctx)
		require.NoError(t, err)
	}
	st := eps[1].Stats()
	require.Equal(t, int64(window/2+2*window), st.Sinks, "every message of the ended operation discarded")
	require.Zero(t, st.Peers[0].Conn.UnexpectedBytes)
}

// An operation that ends while a send of it is in the core and another
// with its tag is queued behind it fails both: withdrawing the first must
// not hand the second to the core, where it would go eager and complete
// for its caller, only to be cancelled as one of the operation's.
func TestEndFailsQueuedSendBehindInCore(t *testing.T) {
	eps := newTestWorld(t, 2, Config{Core: metaroce.Config{UnexpectedBytes: smallBudget}})
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 5, Op: 3}}
	big := eps[1].Send(0, tag, make([]byte, 256<<10)) // beyond the budget: stays in the core
	small := eps[1].Send(0, tag, []byte{1, 2, 3})
	reason := errors.New("gave up")
	eps[1].Abort(tag.OpKey, nil, reason)
	for what, s := range map[string]transport.Request{"the send in the core": big, "the send queued behind it": small} {
		_, err := s.Wait(testCtx(t))
		require.ErrorIs(t, err, reason, what)
	}
}
