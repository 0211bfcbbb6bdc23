package tcp

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// unexpectedStats returns how many messages from peer wait at e, how many
// of them are rendezvous requests, and the bytes of eager data held.
func unexpectedStats(e *Endpoint, peer int) (msgs, rts int, held int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, list := range e.peers[peer].unexpected {
		for _, u := range list {
			msgs++
			if u.rts {
				rts++
			}
			held += int64(len(u.data))
		}
	}
	return msgs, rts, held
}

// TestUnexpectedBytesBounded sends many eager-sized messages that no one
// receives yet: the receiver holds at most its credit, the rest waits as
// rendezvous requests, and every message arrives intact once received.
func TestUnexpectedBytesBounded(t *testing.T) {
	const count, size, budget = 100, 4096, 64 << 10
	eps := newTestWorld(t, 2, Config{UnexpectedBytesMax: budget})
	sends := make([]transport.Request, count)
	for i := range sends {
		sends[i] = eps[0].Send(1, tag(1, uint32(i)), transporttest.Pattern(size, uint64(i)))
	}
	require.Eventually(t, func() bool { msgs, _, _ := unexpectedStats(eps[1], 0); return msgs == count },
		20*time.Second, time.Millisecond)
	_, rts, held := unexpectedStats(eps[1], 0)
	require.LessOrEqual(t, held, int64(budget))
	require.GreaterOrEqual(t, rts, count-budget/size)

	buf := make([]byte, size)
	for i := count - 1; i >= 0; i-- { // in reverse, to free credit out of order
		n, err := eps[1].Recv(0, tag(1, uint32(i)), buf).Wait(waitCtx(t))
		require.NoError(t, err)
		require.Equal(t, size, n)
		require.NoError(t, transporttest.Verify(buf, uint64(i)))
	}
	for _, s := range sends {
		_, err := s.Wait(waitCtx(t))
		require.NoError(t, err)
	}
	_, _, held = unexpectedStats(eps[1], 0)
	require.Zero(t, held)
}

// TestCancelledRendezvousSendWithdraws cancels a rendezvous send whose
// request-to-send already reached the receiver: the receive that later
// matches it fails with ErrWithdrawn instead of waiting forever.
func TestCancelledRendezvousSendWithdraws(t *testing.T) {
	eps := newTestWorld(t, 2, Config{})
	s := eps[0].Send(1, tag(1, 0), make([]byte, 1<<20))
	require.Eventually(t, func() bool { _, rts, _ := unexpectedStats(eps[1], 0); return rts == 1 },
		20*time.Second, time.Millisecond)
	s.Cancel()
	_, err := s.Wait(waitCtx(t))
	require.ErrorIs(t, err, transport.ErrCancelled)
	_, err = eps[1].Recv(0, tag(1, 0), make([]byte, 1<<20)).Wait(waitCtx(t))
	require.ErrorIs(t, err, ErrWithdrawn)
	require.ErrorContains(t, err, "rank 0")
}

// TestAbortReasonCut checks that a long abort reason reaches peers cut to
// MaxReasonBytes.
func TestAbortReasonCut(t *testing.T) {
	eps := newTestWorld(t, 2, Config{})
	reason := errors.New(strings.Repeat("x", 3*MaxReasonBytes))
	eps[0].Abort(tag(1, 0).OpKey, []int{1, 5, -1, 0}, reason) // bad and own ranks are skipped
	_, err := eps[1].Recv(0, tag(1, 0), nil).Wait(waitCtx(t))
	var ra *transport.RemoteAbortError
	require.ErrorAs(t, err, &ra)
	require.Len(t, ra.Reason, MaxReasonBytes)
	_, err = eps[0].Recv(1, tag(1, 0), nil).Wait(waitCtx(t))
	require.ErrorIs(t, err, reason, "a new request of an aborted operation fails with the reason")
}

// TestAbortHistoryBounded aborts more operations than AbortHistoryMax and
// checks that only the newest are remembered.
func TestAbortHistoryBounded(t *testing.T) {
	eps := newTestWorld(t, 2, Config{AbortHistoryMax: 4})
	for op := range uint64(10) {
		eps[0].Abort(tag(op, 0).OpKey, []int{1}, errors.New("stop"))
	}
	_, err := eps[1].Recv(0, tag(9, 0), nil).Wait(waitCtx(t))
	var ra *transport.RemoteAbortError
	require.ErrorAs(t, err, &ra)
	for _, ep := range eps {
		ep.mu.Lock()
		require.Len(t, ep.ended.byOp, 4)
		require.Len(t, ep.ended.order, 4)
		ep.mu.Unlock()
	}
}
