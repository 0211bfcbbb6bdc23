package mrtransport

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
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

// TestOneWaiterSpins: while one waiter spins, another's Spin returns false
// at once (it sleeps on its request instead, and the spinning one reads
// for both) and reads nothing; it leaves the first waiter's mark alone.
// Then, with no one spinning, a waiter spins and reads its message.
func TestOneWaiterSpins(t *testing.T) {
	linuxOnly(t, "a waiter reading the sockets (epoll)")
	eps := newTestWorld(t, 2, Config{SpinWait: MaxSpinWait})
	sp := eps[0].eng.spin
	if sp == nil {
		t.Skip("no spinner on this system")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 7, Op: 1}}
	buf := make([]byte, 8)
	r := eps[0].Recv(1, tag, buf)
	sp.spinning.Store(true) // another waiter spins
	before := eps[0].Stats().Engine.SpinBatches
	if r.(*request).Spin(ctx) {
		t.Fatal("Spin completed a receive whose message was never sent")
	}
	if got := eps[0].Stats().Engine.SpinBatches; got != before {
		t.Fatalf("a second waiter read %d batches while another spun", got-before)
	}
	if !sp.spinning.Load() {
		t.Fatal("the second waiter cleared the spinning waiter's mark")
	}
	sp.spinning.Store(false)
	if _, err := eps[1].Send(0, tag, []byte("12345678")).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for !r.(*request).Spin(ctx) {
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
	}
	if sp.spinning.Load() {
		t.Fatal("the spinning waiter left its mark")
	}
	if string(buf) != "12345678" {
		t.Fatalf("received %q", buf)
	}
}
