//go:build linux

package shm_test

import (
	"fmt"
	"testing"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
)

// eagerSizes are message lengths around the ring's framing: one slot, a
// first slot and whole or partial continuation slots, the eager limit and
// one past it (a rendezvous).
var eagerSizes = []int{0, 1, shm.InlineMax, shm.InlineMax + 1, shm.InlineMax + shm.SlotBytes,
	shm.InlineMax + shm.SlotBytes + 1, 1000, shm.EagerMax - 1, shm.EagerMax, shm.EagerMax + 1}

// TestEagerSizes sends every eager size to a posted receive and, under
// another tag, to one posted after the message came (held as unexpected),
// and checks the bytes.
func TestEagerSizes(t *testing.T) {
	eps := newTestWorld(t, 2, shm.Config{})
	for i, n := range eagerSizes {
		early, late := make([]byte, n), make([]byte, n)
		posted := eps[1].Recv(0, ltag(uint32(2*i)), early)
		s1 := eps[0].Send(1, ltag(uint32(2*i)), payload(i, n))
		s2 := eps[0].Send(1, ltag(uint32(2*i+1)), payload(i+100, n))
		checkRecv(t, posted, early, payload(i, n), fmt.Sprintf("%d bytes, posted first", n))
		checkRecv(t, eps[1].Recv(0, ltag(uint32(2*i+1)), late), late, payload(i+100, n), fmt.Sprintf("%d bytes, held", n))
		for _, s := range []transport.Request{s1, s2} {
			if _, err := s.Wait(waitCtx(t)); err != nil {
				t.Fatalf("send of %d bytes: %v", n, err)
			}
		}
	}
}

// TestEagerBacklog sends more multi-slot messages than a small ring holds
// (its eager limit is then below EagerMax) under one tag and checks that
// they arrive whole and in order.
func TestEagerBacklog(t *testing.T) {
	// MaxUnexpected keeps the receiver from draining its ring before the
	// receives are posted, so the ring fills and the backlog is used.
	eps := newTestWorld(t, 2, shm.Config{RingSlots: 16, MaxUnexpected: 4})
	const count = 60
	sizes := func(i int) int { return 1 + (i*337)%2500 } // some above the small ring's limit
	var sends []transport.Request
	for i := range count {
		sends = append(sends, eps[0].Send(1, ltag(0), payload(i, sizes(i))))
	}
	for i := range count {
		buf := make([]byte, sizes(i))
		checkRecv(t, eps[1].Recv(0, ltag(0), buf), buf, payload(i, sizes(i)), fmt.Sprintf("message %d", i))
	}
	for i, s := range sends {
		if _, err := s.Wait(waitCtx(t)); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if eps[0].Stats().Backlogged == 0 {
		t.Error("no message waited in the backlog; the test does not test it")
	}
}

// TestDataOutlivesSendersClose checks that messages carried in the ring
// stay receivable after their sender closed (and its BYE was read), while
// a receive for a message that never came fails naming the rank.
func TestDataOutlivesSendersClose(t *testing.T) {
	eps := newTestWorld(t, 2, shm.Config{})
	const n = 1000
	if _, err := eps[0].Send(1, ltag(0), payload(0, n)).Wait(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := eps[0].Close(); err != nil {
		t.Fatal(err)
	}
	// A receive that cannot match fails once the BYE is read.
	r := eps[1].Recv(0, ltag(1), make([]byte, 8))
	if _, err := r.Wait(waitCtx(t)); err == nil {
		t.Fatal("a receive from a closed rank succeeded")
	}
	buf := make([]byte, n)
	checkRecv(t, eps[1].Recv(0, ltag(0), buf), buf, payload(0, n), "message sent before Close")
}
