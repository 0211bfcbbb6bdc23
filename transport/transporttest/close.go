package transporttest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gocoll/gocoll/transport"
)

// testClose checks that Close fails pending requests with ErrClosed, that
// every later call fails with ErrClosed through its Request, and that Close
// may be called again.
func testClose(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	buf := Pattern(64, 7)
	recv := eps[0].Recv(1, tag(1, 0), buf)
	selfRecv := eps[0].Recv(0, tag(1, 0), make([]byte, 8))
	send := eps[0].Send(1, tag(1, 1), Pattern(2<<20, 1)) // nobody receives it

	if err := eps[0].Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitFail(t, recv, "pending receive at Close", isErr(transport.ErrClosed))
	waitFail(t, selfRecv, "pending receive from self at Close", isErr(transport.ErrClosed))
	if _, err := wait(t, send, "pending send at Close"); err != nil && !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("pending send at Close: got %v, want ErrClosed or success", err)
	}
	checkData(t, buf, 7, "buffer of a receive failed by Close")

	waitFail(t, eps[0].Send(1, tag(2, 0), []byte{1}), "send after Close", isErr(transport.ErrClosed))
	waitFail(t, eps[0].Recv(1, tag(2, 0), make([]byte, 1)), "receive after Close", isErr(transport.ErrClosed))
	waitFail(t, eps[0].Send(0, tag(2, 0), []byte{1}), "send to self after Close", isErr(transport.ErrClosed))
	eps[0].Abort(tag(2, 0).OpKey, []int{1}, errors.New("after close")) // must not panic or block
	if err := eps[0].Close(); err != nil && !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("second Close: got %v, want nil or ErrClosed", err)
	}
}

// testPeerCloseDelivers checks that a message whose send completed before
// its sender closed is still received intact, in order for its tag, by a
// receive posted after the close: a rank that sends its last results and
// exits loses nothing its sends reported done. Rank 1 sends small, 0-byte,
// multi-datagram and 64 KiB messages (two under one tag) and closes; a
// send of rank 0 to the closed rank then completes or fails (a transport
// that needs the peer's answer learns of the close by then); only then
// does rank 0 post its receives. Every send that completed without error,
// before the close or at it, is checked; one that failed at the close (a
// transport without buffering) is not.
func testPeerCloseDelivers(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	sizes := []int{8, 0, 3000, 64 << 10, 16, 5000}
	seqs := []uint32{0, 1, 2, 3, 4, 4} // two messages under tag 4
	var sends []transport.Request
	for i, n := range sizes {
		sends = append(sends, eps[1].Send(0, tag(1, seqs[i]), Pattern(n, uint64(i+1))))
	}
	if err := eps[1].Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	done := make([]bool, len(sends)) // settled by Close: nil means sent
	for i, s := range sends {
		n, err := wait(t, s, "send at the close")
		if err == nil && n != sizes[i] {
			t.Fatalf("send %d completed with %d bytes, want %d", i, n, sizes[i])
		}
		done[i] = err == nil
	}
	wait(t, eps[0].Send(1, tag(2, 0), []byte{1}), "send to the closed rank") // either outcome
	checked := 0
	for i, n := range sizes {
		if !done[i] {
			continue
		}
		if i > 0 && seqs[i-1] == seqs[i] && !done[i-1] {
			break // its receive would take the message that was not sent
		}
		buf := make([]byte, n)
		waitOK(t, eps[0].Recv(1, tag(1, seqs[i]), buf), n, fmt.Sprintf("message %d (%d bytes), received after its sender closed", i, n))
		checkData(t, buf, uint64(i+1), fmt.Sprintf("message %d", i))
		checked++
	}
	t.Logf("%d of %d messages had completed sends and arrived after the close", checked, len(sizes))
}
