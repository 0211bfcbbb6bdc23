//go:build linux

package shm

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// headTags are the tags of a head and its rendezvous message: one
// operation, seqs 0 and 1, as a collective's header and first data message.
func headTags(op uint64) (transport.Tag, transport.Tag) {
	k := transport.OpKey{Comm: 11, Op: op}
	return transport.Tag{OpKey: k}, transport.Tag{OpKey: k, Seq: 1}
}

// TestSendWithHeadOneSlot: a head rides in its rendezvous message's slot
// (one slot for the two messages) and each arrives at its own receive,
// whether that receive was posted before the slot came or after: a
// posted head with an unexpected body, and an unexpected head with a
// posted body.
func TestSendWithHeadOneSlot(t *testing.T) {
	eps, ctx := copiedWorld(t)
	ring := eps[1].seg.ring(0)
	head := []byte("a 32-byte operation header here!")
	body := bytes.Repeat([]byte{0x6d}, 64<<10)
	for op, headFirst := range []bool{true, false} {
		ht, bt := headTags(uint64(op))
		hbuf, bbuf := make([]byte, 4096), make([]byte, len(body))
		var hr, br transport.Request
		if headFirst {
			hr = eps[1].Recv(0, ht, hbuf)
		} else {
			br = eps[1].Recv(0, bt, bbuf)
		}
		before := ring.tail.Load()
		shr, sbr := eps[0].SendWithHead(1, ht, head, bt, body)
		if got := ring.tail.Load() - before; got != 1 {
			t.Fatalf("head and body took %d slots, want 1", got)
		}
		if headFirst {
			br = eps[1].Recv(0, bt, bbuf)
		} else {
			hr = eps[1].Recv(0, ht, hbuf)
		}
		for _, c := range []struct {
			name      string
			send, rcv transport.Request
			buf, want []byte
		}{{"head", shr, hr, hbuf, head}, {"body", sbr, br, bbuf, body}} {
			what := fmt.Sprintf("%s (head received first: %v)", c.name, headFirst)
			if n, err := c.send.Wait(ctx); err != nil || n != len(c.want) {
				t.Fatalf("send of the %s: %d bytes, %v", what, n, err)
			}
			if n, err := c.rcv.Wait(ctx); err != nil || n != len(c.want) || !bytes.Equal(c.buf[:n], c.want) {
				t.Fatalf("receive of the %s: %d bytes, %v", what, n, err)
			}
		}
	}
}

// TestSendWithHeadApart: a pair that does not qualify (a head longer than
// a slot carries, a body the ring carries itself, tags of two operations)
// goes as two Sends, and still arrives.
func TestSendWithHeadApart(t *testing.T) {
	eps, ctx := copiedWorld(t)
	ring := eps[1].seg.ring(0)
	ht, bt := headTags(1)
	other := bt
	other.Op++
	for i, c := range []struct {
		head, body []byte
		bt         transport.Tag
		slots      uint64
	}{
		{bytes.Repeat([]byte{1}, InlineMax+1), bytes.Repeat([]byte{2}, 64<<10), bt, 3},
		{[]byte("head"), bytes.Repeat([]byte{3}, 100), bt, 2},
		{[]byte("head"), bytes.Repeat([]byte{4}, 64<<10), other, 2},
	} {
		hbuf, bbuf := make([]byte, len(c.head)), make([]byte, len(c.body))
		hr, br := eps[1].Recv(0, ht, hbuf), eps[1].Recv(0, c.bt, bbuf)
		before := ring.tail.Load()
		shr, sbr := eps[0].SendWithHead(1, ht, c.head, c.bt, c.body)
		if got := ring.tail.Load() - before; got != c.slots {
			t.Fatalf("case %d: %d slots, want %d (apart)", i, got, c.slots)
		}
		for _, r := range []transport.Request{shr, sbr, hr, br} {
			if _, err := r.Wait(ctx); err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
		}
		if !bytes.Equal(hbuf, c.head) || !bytes.Equal(bbuf, c.body) {
			t.Fatalf("case %d: wrong bytes", i)
		}
	}
}

// TestSendWithHeadWaitsForRoom: a head that finds MaxUnexpected reached
// leaves its slot in the ring, body included (whose receive is posted),
// until a receive makes room; then both arrive, and nothing twice.
func TestSendWithHeadWaitsForRoom(t *testing.T) {
	eps, ctx := worldOf2(t, Config{MaxUnexpected: 1})
	filler := transport.Tag{OpKey: transport.OpKey{Comm: 11, Op: 99}}
	if _, err := eps[0].Send(1, filler, []byte("held")).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	ht, bt := headTags(1)
	body := bytes.Repeat([]byte{0x44}, 64<<10)
	bbuf := make([]byte, len(body))
	br := eps[1].Recv(0, bt, bbuf)
	_, sbr := eps[0].SendWithHead(1, ht, []byte("head"), bt, body)
	for !eps[1].stalled.Load() { // the filler is held, so the head cannot be
		if ctx.Err() != nil {
			t.Fatal("rank 1 never stalled on the head")
		}
		time.Sleep(time.Millisecond)
	}
	if br.(*request).Completed() {
		t.Fatal("the body arrived while its head could not be taken")
	}
	fbuf := make([]byte, 4)
	if _, err := eps[1].Recv(0, filler, fbuf).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	hbuf := make([]byte, 4)
	for _, r := range []transport.Request{eps[1].Recv(0, ht, hbuf), br, sbr} {
		if _, err := r.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if string(hbuf) != "head" || !bytes.Equal(bbuf, body) {
		t.Fatal("wrong bytes after the stall")
	}
	again := eps[1].Recv(0, ht, make([]byte, 4)) // a second head would match this
	defer again.Cancel()
	if again.(*request).Completed() {
		t.Fatal("the head arrived twice")
	}
}
