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
