package tcp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// TestRemoteAbortRefusesWaitingMessages checks that a told rank drops the
// messages of the operation that wait there from a third rank: an eager
// message's credit comes back, and a waiting rendezvous request is refused,
// so that the third rank's send fails instead of waiting.
func TestRemoteAbortRefusesWaitingMessages(t *testing.T) {
	eps := newTestWorld(t, 3, Config{EagerLimit: 1024})
	x := tag(1, 0)
	eager := eps[2].Send(1, x, transporttest.Pattern(100, 1))
	rdv := eps[2].Send(1, tag(1, 1), transporttest.Pattern(1<<20, 2))
	require.Eventually(t, func() bool { msgs, _, held := unexpectedStats(eps[1], 2); return msgs == 2 && held == 100 },
		20*time.Second, time.Millisecond)
	_, err := eager.Wait(waitCtx(t))
	require.NoError(t, err)

	eps[0].Abort(x.OpKey, []int{1}, errors.New("stop"))
	_, err = rdv.Wait(waitCtx(t))
	var ra *transport.RemoteAbortError
	require.ErrorAs(t, err, &ra, "got %v", err)
	require.Equal(t, 1, ra.Rank, "the refusing rank")
	msgs, _, held := unexpectedStats(eps[1], 2)
	require.Zero(t, msgs)
	require.Zero(t, held)
	eps[1].mu.Lock()
	owed := eps[1].peers[2].owed
	eps[1].mu.Unlock()
	require.Equal(t, int64(100), owed, "the dropped eager message's bytes are released")

	// Rank 2 was not told: it still talks to rank 1 on other operations.
	s := eps[2].Send(1, tag(2, 0), transporttest.Pattern(8, 3))
	buf := make([]byte, 8)
	_, err = eps[1].Recv(2, tag(2, 0), buf).Wait(waitCtx(t))
	require.NoError(t, err)
	require.NoError(t, transporttest.Verify(buf, 3))
	_, err = s.Wait(waitCtx(t))
	require.NoError(t, err)
}

// TestRemoteAbortDuringTransfer aborts an operation while a told rank's
// striped rendezvous send to a third rank is starting (round 0) or under
// way (later rounds: once the receiver has some of its bytes). Whatever
// the timing, both ends finish consistently: the send completes and the
// receive gets every byte, or the send fails with the remote abort and
// the receive fails with ErrWithdrawn; and neither buffer is touched after.
// In round 0 the abort may also reach the sender before its RTS leaves:
// then the receiver never heard of the message, and its receive (of a rank
// not told of the abort) stays posted, with no RTS matched.
func TestRemoteAbortDuringTransfer(t *testing.T) {
	eps := newTestWorld(t, 3, Config{ConnsPerPeer: 2, ChunkBytes: 16 << 10})
	const size = 16 << 20
	for round := range 3 {
		op := tag(uint64(10+round), 0)
		dst := make([]byte, size)
		src := transporttest.Pattern(size, uint64(round))
		recv := eps[2].Recv(1, op, dst)
		send := eps[1].Send(2, op, src)
		if round > 0 {
			require.Eventually(t, func() bool { return receivedSome(eps[2], recv) },
				20*time.Second, 100*time.Microsecond)
		}
		eps[0].Abort(op.OpKey, []int{1}, errors.New("stop"))

		_, sendErr := send.Wait(waitCtx(t))
		recvCtx, cancel := waitCtx(t), context.CancelFunc(func() {})
		if sendErr != nil { // withdrawn at once, or never announced
			recvCtx, cancel = context.WithTimeout(recvCtx, 5*time.Second)
		}
		n, recvErr := recv.Wait(recvCtx)
		cancel()
		unannounced := sendErr != nil && errors.Is(recvErr, context.DeadlineExceeded)
		if unannounced {
			matched, _ := rendezvousOf(eps[2], recv)
			require.False(t, matched, "round %d: the receive matched the RTS and was never told of the withdrawal", round)
			require.Zero(t, round, "a receive that had bytes was never told of the withdrawal")
		}
		send.Cancel()
		recv.Cancel()
		transporttest.Fill(src, 99) // the race detector sees any late use
		transporttest.Fill(dst, 99)
		t.Logf("round %d: send %v, receive %v", round, sendErr, recvErr)
		if sendErr == nil {
			require.NoError(t, recvErr)
			require.Equal(t, size, n)
			continue
		}
		var ra *transport.RemoteAbortError
		require.ErrorAs(t, sendErr, &ra)
		require.Equal(t, 0, ra.Rank)
		if !unannounced {
			require.ErrorIs(t, recvErr, ErrWithdrawn)
		}
	}
}

// receivedSome reports whether rendezvous receive r at e has received some
// bytes, or has completed.
func receivedSome(e *Endpoint, r transport.Request) bool {
	_, received := rendezvousOf(e, r)
	return received > 0 || r.(*request).isDone()
}

// rendezvousOf reports whether receive r at e has matched a rendezvous
// message's RTS and waits for its data, and how many bytes it has.
func rendezvousOf(e *Endpoint, r transport.Request) (matched bool, received int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.peers {
		for _, d := range p.rdvRecv {
			if d.req == r {
				return true, d.received
			}
		}
	}
	return false, 0
}
