//go:build linux

package shm

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// TestRecvHeadTakesTail: a RecvHead takes a head and the rendezvous
// message that rode in its slot (SendWithHead) in one request, whether it
// was posted before the slot came or after (both then held as
// unexpected): the request completes with the head's length, Tail reports
// the body's, both buffers hold their bytes, and no Recv of the body is
// needed (one receive counted, where Recv and Recv made two).
func TestRecvHeadTakesTail(t *testing.T) {
	eps, ctx := copiedWorld(t)
	head := []byte("a 32-byte operation header here!")
	body := bytes.Repeat([]byte{0x5a}, 64<<10)
	for op, postFirst := range []bool{true, false} {
		ht, bt := headTags(uint64(op))
		hbuf, bbuf := make([]byte, 4096), make([]byte, len(body))
		before := eps[1].Stats().Receives
		var hr transport.Request
		if postFirst {
			hr = eps[1].RecvHead(0, ht, hbuf, bt, bbuf)
		}
		_, sbr := eps[0].SendWithHead(1, ht, head, bt, body)
		if !postFirst {
			waitHeld(t, ctx, eps[1], 0, bt)
			hr = eps[1].RecvHead(0, ht, hbuf, bt, bbuf)
		}
		if hr == nil {
			t.Fatal("RecvHead posted nothing for a 64 KiB body")
		}
		n, err := hr.Wait(ctx)
		if err != nil || n != len(head) || !bytes.Equal(hbuf[:n], head) {
			t.Fatalf("posted first %v: head %d bytes, %v", postFirst, n, err)
		}
		if tn, ok := transport.TailOf(hr); !ok || tn != len(body) || !bytes.Equal(bbuf, body) {
			t.Fatalf("posted first %v: tail %d bytes, taken %v (want %d, and the body's bytes)", postFirst, tn, ok, len(body))
		}
		if n, err := sbr.Wait(ctx); err != nil || n != len(body) {
			t.Fatalf("posted first %v: the body's send: %d, %v", postFirst, n, err)
		}
		if got := eps[1].Stats().Receives - before; got != 1 {
			t.Fatalf("posted first %v: %d receives counted, want 1", postFirst, got)
		}
		transport.Release(hr)
	}
}

// TestRecvHeadLeavesTail: where the body does not come with the head, or
// does not fit, or a receive of it was posted first, RecvHead completes
// with the head alone (Tail false) and the body goes to a Recv of its
// tag, whole; and RecvHead posts nothing for a body the ring carries.
func TestRecvHeadLeavesTail(t *testing.T) {
	eps, ctx := copiedWorld(t)
	head := []byte("head")
	body := bytes.Repeat([]byte{0x33}, 64<<10)
	if r := eps[1].RecvHead(0, transport.Tag{}, make([]byte, 8), transport.Tag{Seq: 1}, make([]byte, EagerMax)); r != nil {
		t.Fatal("RecvHead posted a receive for a body the ring carries")
	}
	for i, c := range []struct {
		name    string
		apart   bool // head and body sent as two Sends
		bufLen  int  // RecvHead's body buffer
		earlier bool // a Recv of the body posted before RecvHead
	}{
		{"sent apart", true, len(body), false},
		{"body larger than the buffer", false, len(body) - 1, false},
		{"an earlier receive of the body", false, len(body), true},
	} {
		ht, bt := headTags(uint64(10 + i))
		hbuf := make([]byte, 64)
		var early transport.Request
		ebuf := make([]byte, len(body))
		if c.earlier {
			early = eps[1].Recv(0, bt, ebuf)
		}
		hr := eps[1].RecvHead(0, ht, hbuf, bt, make([]byte, c.bufLen))
		var sends []transport.Request
		if c.apart {
			sends = []transport.Request{eps[0].Send(1, ht, head), eps[0].Send(1, bt, body)}
		} else {
			a, b := eps[0].SendWithHead(1, ht, head, bt, body)
			sends = []transport.Request{a, b}
		}
		if n, err := hr.Wait(ctx); err != nil || n != len(head) || string(hbuf[:n]) != "head" {
			t.Fatalf("%s: head %d bytes, %v", c.name, n, err)
		}
		if _, ok := transport.TailOf(hr); ok {
			t.Fatalf("%s: RecvHead took the body", c.name)
		}
		if early == nil {
			early = eps[1].Recv(0, bt, ebuf)
		}
		if n, err := early.Wait(ctx); err != nil || n != len(body) || !bytes.Equal(ebuf, body) {
			t.Fatalf("%s: the body's Recv: %d bytes, %v", c.name, n, err)
		}
		for _, s := range sends {
			if _, err := s.Wait(ctx); err != nil {
				t.Fatalf("%s: send: %v", c.name, err)
			}
		}
	}
}

// waitHeld waits until e holds a message of tag from peer as unexpected.
func waitHeld(t *testing.T, ctx context.Context, e *Endpoint, peer int, tag transport.Tag) {
	t.Helper()
	for {
		e.mu.Lock()
		n := len(e.unexpected[keyOf(peer, tag)])
		e.mu.Unlock()
		if n > 0 {
			return
		}
		if ctx.Err() != nil {
			t.Fatal("the message never arrived")
		}
		time.Sleep(time.Millisecond)
	}
}
