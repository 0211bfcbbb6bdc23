package mrtransport

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/internal/spinwait"
	"github.com/gocoll/gocoll/transport/transporttest"
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
		r := &request{ep: eps[0]}
		r.spinSpare.Store(int64(spare))
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

// A waiter on several requests (SpinAny: the trees' awaitAny) gives up
// spinning on the same pending bulk receive again and again, also just as
// it completes, while the engine reads what the give-ups recorded (learn,
// under its lock, in whichever goroutine completes the receive): run with
// -race. Every receive, given up on before its message was sent, then
// teaches the bulk gauge once as it completes.
func TestSpinAnyGivesUpOnTheSameRequestAgain(t *testing.T) {
	linuxOnly(t, "a waiter reading the sockets (epoll)")
	eps := newTestWorld(t, 2, Config{Paths: 1, SpinWait: time.Microsecond})
	if eps[0].eng.spin == nil {
		t.Fatal("no spinner over loopback udpio sockets")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const rounds = 40
	msg, buf := make([]byte, 64<<10), make([]byte, 64<<10) // bulk: above smallSpinBytes
	before := eps[0].Stats().Engine
	for i := range rounds {
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 9, Op: uint64(i)}}
		msg[0], msg[len(msg)-1] = byte(i), byte(i+1)
		r := eps[0].Recv(1, tag, buf)
		reqs := []transport.Request{r}
		if eps[0].SpinAny(ctx, reqs) >= 0 {
			t.Fatalf("round %d: the receive completed before its message was sent", i)
		}
		s := eps[1].Send(0, tag, msg)
		gaveUp := 1
		for eps[0].SpinAny(ctx, reqs) < 0 {
			if ctx.Err() != nil {
				t.Fatalf("round %d: the receive did not complete after %d give-ups", i, gaveUp)
			}
			gaveUp++
		}
		if n, err := r.Wait(ctx); err != nil || n != len(msg) || buf[0] != byte(i) || buf[n-1] != byte(i+1) {
			t.Fatalf("round %d: received %d bytes (%v), ends %d %d", i, n, err, buf[0], buf[len(buf)-1])
		}
		if _, err := s.Wait(ctx); err != nil {
			t.Fatalf("round %d: send: %v", i, err)
		}
	}
	after := eps[0].Stats().Engine
	// (A bulk SpinAny that catches its request counts as paid too.)
	if learnt := after.SpinsPaid + after.SpinsWasted - before.SpinsPaid - before.SpinsWasted; learnt < rounds {
		t.Fatalf("%d spin outcomes counted over %d receives given up on, want at least one each", learnt, rounds)
	}
}

// A waiter that gives up on a request (gaveUp) just as the engine learns
// from its completion (learn, under the engine's lock): run with -race,
// which a plain spinSpare failed. Each learn after a give-up counts once.
func TestGiveUpWhileLearning(t *testing.T) {
	linuxOnly(t, "a waiter reading the sockets (epoll)")
	eps := newTestWorld(t, 2, Config{Paths: 1})
	e := eps[0].eng
	if e.spin == nil {
		t.Fatal("no spinner over loopback udpio sockets")
	}
	const n = 1000
	r := &request{ep: eps[0]}
	r.gaveUp(time.Microsecond)
	before := eps[0].Stats().Engine
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			r.gaveUp(time.Microsecond)
		}
	}()
	for range n {
		e.lockAPI()
		r.learn(e.last + time.Hour)
		e.mu.Unlock()
	}
	<-done
	after := eps[0].Stats().Engine
	if learnt := after.SpinsPaid + after.SpinsWasted - before.SpinsPaid - before.SpinsWasted; learnt != n {
		t.Fatalf("%d spin outcomes counted over %d learns after a give-up, want one each", learnt, n)
	}
}

// A waiter's spin calls the function SetSpinAlso gave (a route's other
// transports, transport.JointSpinner) once in every round, Spin and
// SpinAny alike, and none once it is removed.
func TestSpinCallsSpinAlso(t *testing.T) {
	linuxOnly(t, "a waiter reading the sockets (epoll)")
	eps := newTestWorld(t, 2, Config{SpinWait: time.Millisecond})
	transporttest.SpinAlso(t, eps[0])
}
