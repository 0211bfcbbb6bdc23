package transporttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// testWaitContext checks that Wait returns the context's error when the
// context ends first, and that the request stays posted and completes later.
func testWaitContext(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	buf := make([]byte, 32)
	r := eps[1].Recv(0, tag(1, 0), buf)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Wait(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context: got %v, want context.Canceled", err)
	}
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	if _, err := r.Wait(expired); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with an expired context: got %v, want context.DeadlineExceeded", err)
	}
	short, cancel3 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel3()
	if _, err := r.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with a short timeout: got %v, want context.DeadlineExceeded", err)
	}
	requirePending(t, r, "receive after Wait's context ended")

	s := eps[0].Send(1, tag(1, 0), Pattern(32, 1))
	waitOK(t, r, 32, "receive after earlier Waits ended by their context")
	checkData(t, buf, 1, "message")
	requireDone(t, r, "receive")
	waitOK(t, s, 32, "send")
	// A completed request keeps its result.
	waitOK(t, r, 32, "second Wait of a completed receive")
}

// testCancel checks that a cancelled receive fails with ErrCancelled, that
// its buffer is untouched even when its message arrives afterwards, and that
// this message goes to the next matching receive instead.
func testCancel(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	for i, n := range []int{100, 1 << 20} {
		tg := tag(uint64(i+1), 0)
		buf := Pattern(n, 99)
		r := eps[1].Recv(0, tg, buf)
		r.Cancel()
		waitFail(t, r, "cancelled receive", isErr(transport.ErrCancelled))
		requireDone(t, r, "cancelled receive")

		s := eps[0].Send(1, tg, Pattern(n, 1))
		buf2 := make([]byte, n)
		waitOK(t, eps[1].Recv(0, tg, buf2), n, "receive after a cancelled one")
		checkData(t, buf2, 1, "message after a cancelled receive")
		waitOK(t, s, n, "send")
		checkData(t, buf, 99, "buffer of the cancelled receive")
		r.Cancel() // a second Cancel is a no-op
		waitFail(t, r, "cancelled receive after a second Cancel", isErr(transport.ErrCancelled))
	}

	// Cancel from another goroutine ends a blocked Wait.
	r := eps[1].Recv(0, tag(5, 0), make([]byte, 8))
	go func() {
		time.Sleep(10 * time.Millisecond)
		r.Cancel()
	}()
	waitFail(t, r, "receive cancelled during Wait", isErr(transport.ErrCancelled))

	// Cancel after completion is a no-op.
	buf := make([]byte, 8)
	r = eps[1].Recv(0, tag(6, 0), buf)
	s := eps[0].Send(1, tag(6, 0), Pattern(8, 6))
	waitOK(t, r, 8, "receive")
	r.Cancel()
	waitOK(t, r, 8, "receive cancelled after completion")
	checkData(t, buf, 6, "message")
	waitOK(t, s, 8, "send")
}

// testCancelSend checks that cancelling a pending send finishes it (either
// cancelled or, if it had already gone, completed) and leaves the endpoints
// usable for other messages.
func testCancelSend(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	for i, n := range []int{100, 2 << 20} {
		s := eps[0].Send(1, tag(uint64(i+1), 0), Pattern(n, 1))
		s.Cancel()
		got, err := wait(t, s, "cancelled send")
		if err != nil && !errors.Is(err, transport.ErrCancelled) {
			t.Fatalf("cancelled send: got %v, want ErrCancelled or success", err)
		}
		if err == nil && got != n {
			t.Fatalf("cancelled send completed with %d bytes, want %d", got, n)
		}
		requireDone(t, s, "cancelled send")
	}
	buf := make([]byte, 1000)
	s := eps[0].Send(1, tag(9, 0), Pattern(1000, 9))
	waitOK(t, eps[1].Recv(0, tag(9, 0), buf), 1000, "receive after cancelled sends")
	checkData(t, buf, 9, "message after cancelled sends")
	waitOK(t, s, 1000, "send")
}

// testBadRank checks that requests naming a rank outside [0, Size) fail with
// ErrBadRank through their Request.
func testBadRank(t *testing.T, newWorld WorldFactory) {
	eps := newWorld(t, 2)
	for _, peer := range []int{-1, 2, 1 << 30} {
		waitFail(t, eps[0].Send(peer, tag(1, 0), []byte{1}), "send to a bad rank", isErr(transport.ErrBadRank))
		waitFail(t, eps[0].Recv(peer, tag(1, 0), make([]byte, 1)), "receive from a bad rank", isErr(transport.ErrBadRank))
	}
}
