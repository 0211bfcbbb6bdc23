package transporttest

import (
	"errors"
	"testing"

	"github.com/gocoll/gocoll/transport"
)

// isRemoteAbort returns a matcher for a *transport.RemoteAbortError from
// rank for op whose reason is text.
func isRemoteAbort(rank int, op transport.OpKey, text string) func(error) bool {
	return func(err error) bool {
		var ra *transport.RemoteAbortError
		return errors.As(err, &ra) && ra.Rank == rank && ra.Op == op && ra.Reason == text
	}
}

// testAbort checks what Abort does on the aborting rank (its pending
// requests of the operation fail with its reason), on the peers it names
// (their pending and later receives from it fail with a RemoteAbortError),
// and what it leaves alone (other operations, other ranks' messages).
func testAbort(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 3)
	x, y := tag(40, 0), tag(41, 0)
	reason := errors.New("boom: mismatched count")

	localRecv := eps[0].Recv(1, x, make([]byte, 8))
	localSend := eps[0].Send(1, tag(40, 1), Pattern(2<<20, 1)) // nobody receives it
	peerRecv := eps[1].Recv(0, x, make([]byte, 8))
	peerRecvY := eps[1].Recv(0, y, make([]byte, 8))
	peerRecvOther := eps[1].Recv(2, x, make([]byte, 8))

	eps[0].Abort(x.OpKey, []int{1, 2}, reason)

	waitFail(t, localRecv, "aborting rank's pending receive", isErr(reason))
	if _, err := wait(t, localSend, "aborting rank's pending send"); err != nil && !errors.Is(err, reason) {
		t.Fatalf("aborting rank's pending send: got %v, want success or an error wrapping the reason", err)
	}
	remote := isRemoteAbort(0, x.OpKey, reason.Error())
	waitFail(t, peerRecv, "peer's pending receive", remote)
	waitFail(t, eps[2].Recv(0, x, make([]byte, 8)), "peer's later receive", remote)
	waitFail(t, eps[2].Recv(0, tag(40, 5), make([]byte, 8)), "peer's later receive, other seq", remote)

	// Another operation between the same ranks is unaffected.
	requirePending(t, peerRecvY, "receive of another operation")
	s := eps[0].Send(1, y, Pattern(8, 2))
	waitOK(t, peerRecvY, 8, "receive of another operation")
	waitOK(t, s, 8, "send of another operation")
	// So are messages of the aborted operation from ranks that did not abort.
	requirePending(t, peerRecvOther, "receive of the aborted operation from another rank")
	s = eps[2].Send(1, x, Pattern(8, 3))
	waitOK(t, peerRecvOther, 8, "receive of the aborted operation from another rank")
	waitOK(t, s, 8, "send from another rank")
}

// testAbortDropsLate checks that messages for an aborted operation that
// arrive after the abort are dropped and do not reach a later operation,
// and that the transport stays usable.
func testAbortDropsLate(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	x := tag(50, 0)
	reason := errors.New("cancelled by user")
	eps[0].Abort(x.OpKey, []int{1}, reason)
	waitFail(t, eps[1].Recv(0, x, make([]byte, 8)), "receive from the aborting rank",
		isRemoteAbort(0, x.OpKey, reason.Error()))

	// Rank 1 has not aborted yet and sends to rank 0 for the aborted
	// operation; rank 0 drops these messages. Then rank 1 aborts too, as a
	// collective would on seeing the remote abort.
	late := []transport.Request{
		eps[1].Send(0, x, Pattern(8, 1)),
		eps[1].Send(0, tag(50, 1), Pattern(1<<20, 2)),
	}
	eps[1].Abort(x.OpKey, []int{0}, errors.New("peer aborted"))
	for _, s := range late {
		_, _ = wait(t, s, "send for an aborted operation") // any outcome, but it must finish
	}

	// A later operation with the same sequence numbers sees only its own data.
	for seq, n := range []int{8, 1 << 20} {
		next := tag(51, uint32(seq))
		s := eps[1].Send(0, next, Pattern(n, 10+uint64(seq)))
		buf := make([]byte, 1<<20)
		waitOK(t, eps[0].Recv(1, next, buf), n, "receive of the next operation")
		checkData(t, buf[:n], 10+uint64(seq), "message of the next operation")
		waitOK(t, s, n, "send of the next operation")
	}
}
