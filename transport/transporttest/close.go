package transporttest

import (
	"errors"
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
