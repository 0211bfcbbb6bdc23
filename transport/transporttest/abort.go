package transporttest

import (
	"errors"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// The Abort subtests check that an abort ends its operation on the aborting
// rank and on every told peer: there, every pending and later request of the
// operation, to or from any rank, fails; the operation's late messages are
// dropped; other operations go on. Sends that must be pending use
// LargeBytes messages that no rank receives; the suite assumes a transport
// does not complete such a send on its own (a transport that does is not
// checked for the failure of that send).

// isRemoteAbort returns a matcher for a *transport.RemoteAbortError from
// rank for op whose reason is text.
func isRemoteAbort(rank int, op transport.OpKey, text string) func(error) bool {
	return func(err error) bool {
		var ra *transport.RemoteAbortError
		return errors.As(err, &ra) && ra.Rank == rank && ra.Op == op && ra.Reason == text
	}
}

// anyErr matches every error.
func anyErr(error) bool { return true }

// pendingNow reports whether r has not completed yet.
func pendingNow(r transport.Request) bool {
	select {
	case <-r.Done():
		return false
	default:
		return true
	}
}

// cancelPromptly calls r.Cancel and fails t unless Cancel returns within
// WaitTimeout, which shows that the transport has released r's buffer.
func cancelPromptly(t testing.TB, r transport.Request, what string) {
	t.Helper()
	returned := make(chan struct{})
	go func() {
		r.Cancel()
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(waitTimeout):
		t.Fatalf("%s: Cancel still blocked after %v", what, waitTimeout)
	}
}

// failIfWasPending checks a send that was pending when its operation ended:
// it must fail with an error matched by match, Cancel must return, and the
// transport must no longer touch buf (which the caller then overwrites, so
// that the race detector sees any late read).
func failIfWasPending(t testing.TB, s transport.Request, wasPending bool, buf []byte, what string, match func(error) bool) {
	t.Helper()
	if !wasPending {
		_, _ = wait(t, s, what)
		t.Logf("%s: completed before the abort; its failure is not checked", what)
		return
	}
	waitFail(t, s, what, match)
	cancelPromptly(t, s, what)
	Fill(buf, 0xdead)
}

// testAbort checks what Abort does on the aborting rank (its pending and
// later requests of the operation fail with its reason) and on a told peer
// (its pending and later requests of the operation, with the aborting rank
// and with a third rank alike, fail with a RemoteAbortError naming the
// aborting rank and its reason), and that other operations go on.
func testAbort(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 4) // rank 0 aborts and tells ranks 1 and 2; rank 3 is not told
	x, y := tag(40, 0), tag(41, 0)
	reason := errors.New("boom: mismatched count")

	localRecv := eps[0].Recv(1, x, make([]byte, 8))
	localBuf := Pattern(LargeBytes, 1)
	localSend := eps[0].Send(1, tag(40, 1), localBuf) // nobody receives it
	peerRecv := eps[1].Recv(0, x, make([]byte, 8))
	thirdRecv := eps[1].Recv(3, tag(40, 2), make([]byte, 8))
	toldThirdRecv := eps[2].Recv(3, tag(40, 2), make([]byte, 8))
	otherOp := eps[1].Recv(0, y, make([]byte, 8))
	for _, r := range []transport.Request{localRecv, peerRecv, thirdRecv, toldThirdRecv, otherOp} {
		requirePending(t, r, "receive before the abort")
	}
	localSendPending := pendingNow(localSend)

	eps[0].Abort(x.OpKey, []int{1, 2}, reason)

	own := isErr(reason)
	waitFail(t, localRecv, "aborting rank's pending receive", own)
	failIfWasPending(t, localSend, localSendPending, localBuf, "aborting rank's pending send", own)
	waitFail(t, eps[0].Recv(3, tag(40, 3), make([]byte, 8)), "aborting rank's later receive", own)
	waitFail(t, eps[0].Send(2, tag(40, 3), Pattern(8, 3)), "aborting rank's later send", own)

	remote := isRemoteAbort(0, x.OpKey, reason.Error())
	waitFail(t, peerRecv, "told peer's pending receive from the aborting rank", remote)
	waitFail(t, thirdRecv, "told peer's pending receive from a third rank", remote)
	waitFail(t, toldThirdRecv, "second told peer's pending receive from a third rank", remote)
	waitFail(t, eps[1].Recv(0, tag(40, 5), make([]byte, 8)), "told peer's later receive from the aborting rank", remote)
	waitFail(t, eps[1].Recv(3, tag(40, 5), make([]byte, 8)), "told peer's later receive from a third rank", remote)
	waitFail(t, eps[1].Send(3, tag(40, 6), Pattern(8, 4)), "told peer's later send to a third rank", remote)
	waitFail(t, eps[2].Send(1, tag(40, 6), Pattern(8, 5)), "second told peer's later send to a told rank", remote)

	// Another operation between the same ranks is unaffected, and so is
	// the rank that was not told.
	requirePending(t, otherOp, "receive of another operation")
	s := eps[0].Send(1, y, Pattern(8, 2))
	waitOK(t, otherOp, 8, "receive of another operation")
	waitOK(t, s, 8, "send of another operation")
	s = eps[1].Send(3, tag(41, 1), Pattern(8, 6))
	buf := make([]byte, 8)
	waitOK(t, eps[3].Recv(1, tag(41, 1), buf), 8, "untold rank's receive of another operation")
	checkData(t, buf, 6, "message of another operation")
	waitOK(t, s, 8, "told peer's send of another operation")
}

// testAbortEndsSends checks that a told peer's pending send of the aborted
// operation to a third rank, which will never receive it (a late ring
// neighbour), fails, and that the transport gives its buffer back.
func testAbortEndsSends(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 3) // rank 0 aborts and tells rank 1; rank 2 is not told
	x := tag(45, 0)
	reason := errors.New("deadline exceeded on rank 0")

	small := eps[1].Send(2, x, Pattern(8, 1))
	largeBuf := Pattern(LargeBytes, 2)
	large := eps[1].Send(2, tag(45, 1), largeBuf)
	largePending := pendingNow(large)

	eps[0].Abort(x.OpKey, []int{1}, reason)

	failIfWasPending(t, large, largePending, largeBuf, "told peer's pending send to a third rank", anyErr)
	// A small send may have gone before the abort arrived; either way it
	// must finish and give its buffer back.
	_, _ = wait(t, small, "told peer's small send to a third rank")
	cancelPromptly(t, small, "told peer's small send to a third rank")
	waitFail(t, eps[1].Send(2, tag(45, 2), Pattern(LargeBytes, 3)), "told peer's later send to a third rank",
		isRemoteAbort(0, x.OpKey, reason.Error()))
}

// testAbortDropsLate checks that messages of an aborted operation that
// reach the aborting rank or a told peer after the abort (here from a rank
// that was not told) are dropped and do not reach a later operation, and
// that the transport stays usable.
func testAbortDropsLate(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 3) // rank 0 aborts and tells rank 1; rank 2 is not told
	x := tag(50, 0)
	reason := errors.New("cancelled by user")
	eps[0].Abort(x.OpKey, []int{1}, reason)
	waitFail(t, eps[1].Recv(0, x, make([]byte, 8)), "told peer's receive",
		isRemoteAbort(0, x.OpKey, reason.Error()))

	// Rank 2 has not heard of the abort and sends for the aborted
	// operation; ranks 0 and 1 drop these messages. Then rank 2 aborts too,
	// as a collective would on learning of the failure.
	var late []transport.Request
	for _, dst := range []int{0, 1} {
		late = append(late,
			eps[2].Send(dst, x, Pattern(8, 1)),
			eps[2].Send(dst, tag(50, 1), Pattern(1<<20, 2)))
	}
	eps[2].Abort(x.OpKey, []int{0, 1}, errors.New("peer aborted"))
	for _, s := range late {
		_, _ = wait(t, s, "send for an aborted operation") // any outcome, but it must finish
	}

	// A later operation with the same sequence numbers sees only its own data.
	for _, dst := range []int{0, 1} {
		for seq, n := range []int{8, 1 << 20} {
			next := tag(51, uint32(seq))
			seed := uint64(10*dst + seq)
			s := eps[2].Send(dst, next, Pattern(n, seed))
			buf := make([]byte, 1<<20)
			waitOK(t, eps[dst].Recv(2, next, buf), n, "receive of the next operation")
			checkData(t, buf[:n], seed, "message of the next operation")
			waitOK(t, s, n, "send of the next operation")
		}
	}
}

// testAbortKeepsFirstError checks that a rank that has already ended an
// operation, by its own abort or a peer's, keeps that first error when
// another rank's abort of the operation reaches it. The later abort is
// followed by a message of another operation on the same pair of ranks, so
// that a transport that keeps each pair's traffic in order has surely
// handled it by the time the rank's requests are checked.
func testAbortKeepsFirstError(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 3)
	own, first, second := errors.New("own reason"), errors.New("first reason"), errors.New("second reason")

	// Rank 1 aborts x itself; then rank 0 aborts x and tells rank 1.
	x := tag(55, 0)
	eps[1].Abort(x.OpKey, nil, own)
	eps[0].Abort(x.OpKey, []int{1}, second)
	exchangeMarker(t, eps[0], eps[1], tag(57, 0))
	err := waitFail(t, eps[1].Recv(2, x, make([]byte, 8)), "receive after the own abort", isErr(own))
	if isRemoteAbort(0, x.OpKey, second.Error())(err) {
		t.Fatalf("receive after the own abort: got the later remote abort %v", err)
	}

	// Rank 2 aborts z and tells rank 1; then rank 0 aborts z and tells rank 1.
	z := tag(56, 0)
	pending := eps[1].Recv(0, z, make([]byte, 8))
	eps[2].Abort(z.OpKey, []int{1}, first)
	waitFail(t, pending, "receive ended by the first abort", isRemoteAbort(2, z.OpKey, first.Error()))
	eps[0].Abort(z.OpKey, []int{1}, second)
	exchangeMarker(t, eps[0], eps[1], tag(57, 1))
	waitFail(t, eps[1].Recv(0, z, make([]byte, 8)), "receive after a second remote abort",
		isRemoteAbort(2, z.OpKey, first.Error()))
}

// exchangeMarker sends one message from a to b under tg and waits for it.
func exchangeMarker(t testing.TB, a, b transport.Endpoint, tg transport.Tag) {
	t.Helper()
	s := a.Send(b.Rank(), tg, Pattern(4, 7))
	waitOK(t, b.Recv(a.Rank(), tg, make([]byte, 4)), 4, "marker message")
	waitOK(t, s, 4, "marker send")
}
