package mrtransport

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/internal/spinwait"
)

// pingPong sends n small messages from rank 0 to rank 1 and back, each
// waited for with Wait, and checks every byte.
func pingPong(t *testing.T, eps []*Endpoint, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() { // rank 1 echoes
		buf := make([]byte, 64)
		for i := range n {
			tag := transport.Tag{OpKey: transport.OpKey{Comm: 7, Op: uint64(i)}}
			got, err := eps[1].Recv(0, tag, buf).Wait(ctx)
			if err == nil {
				_, err = eps[1].Send(0, tag, buf[:got]).Wait(ctx)
			}
			if err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	back := make([]byte, 64)
	for i := range n {
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 7, Op: uint64(i)}}
		msg := []byte{byte(i), byte(i >> 8), 1, 2, 3}
		r := eps[0].Recv(1, tag, back)
		if _, err := eps[0].Send(1, tag, msg).Wait(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := r.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back[:got], msg) {
			t.Fatalf("message %d came back as %x, want %x", i, back[:got], msg)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// TestSpinningWaitReadsSockets checks that with a SpinWait a waiting
// request reads the path sockets itself (SpinBatches), and that the
// messages it reads arrive intact; with SpinWait negative it never does.
func TestSpinningWaitReadsSockets(t *testing.T) {
	linuxOnly(t, "a waiter reading the sockets (epoll)")
	for _, tc := range []struct {
		name  string
		spin  time.Duration
		spins bool
	}{
		{"spin", 10 * time.Millisecond, true},
		{"never", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eps := newTestWorld(t, 2, Config{SpinWait: tc.spin})
			pingPong(t, eps, 200)
			var spun int64
			for _, e := range eps {
				spun += e.Stats().Engine.SpinBatches
			}
			if spun > 0 != tc.spins {
				t.Fatalf("SpinWait %v: %d batches read by waiters, want some: %v", tc.spin, spun, tc.spins)
			}
		})
	}
}

func TestSpinWaitLimit(t *testing.T) {
	if _, err := (Config{Size: 1, SpinWait: MaxSpinWait + 1}).withDefaults(); err == nil {
		t.Fatal("SpinWait above MaxSpinWait accepted")
	}
}

// A bulk request (anything but a small receive) that gave up spinning
// teaches the bulk gauge (spinwait.Gauge) as it completes: a wasted spin
// when it came after the rest of the whole budget, a paid one when within
// it; a request that never gave up teaches nothing, and the outcomes are
// counted in the engine's stats.
func TestSpinOutcomesTeachTheBulkGauge(t *testing.T) {
	linuxOnly(t, "a waiter reading the sockets (epoll)")
	eps := newTestWorld(t, 2, Config{Paths: 1})
	sp := eps[0].eng.spin
	if sp == nil {
		t.Fatal("no spinner over loopback udpio sockets")
	}
	gaveUp := func(spare, after time.Duration) {
		r := &request{ep: eps[0], spinSpare: spare}
		r.spunOut.Store(int64(time.Second))
		r.learn(time.Second + after)
	}
	for range spinwait.GaugeShiftMax { // whatever the world's start taught it
		sp.bulk.Paid()
	}
	before := eps[0].Stats().Engine
	gaveUp(0, time.Millisecond)
	gaveUp(0, time.Millisecond)
	if s := sp.bulk.Shift(); s != 2 {
		t.Fatalf("after 2 wasted spins: shift %d, want 2", s)
	}
	gaveUp(40*time.Microsecond, 30*time.Microsecond) // a whole spin would have caught it
	if s := sp.bulk.Shift(); s != 1 {
		t.Fatalf("after a paid spin: shift %d, want 1", s)
	}
	(&request{ep: eps[0]}).learn(time.Hour) // never gave up spinning
	if s := sp.bulk.Shift(); s != 1 {
		t.Fatalf("a request that never gave up spinning moved the gauge to %d", s)
	}
	after := eps[0].Stats().Engine
	if paid, wasted := after.SpinsPaid-before.SpinsPaid, after.SpinsWasted-before.SpinsWasted; paid != 1 || wasted != 2 {
		t.Fatalf("counted %d paid and %d wasted spins, want 1 and 2", paid, wasted)
	}
}
