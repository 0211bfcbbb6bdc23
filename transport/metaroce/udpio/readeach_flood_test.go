package udpio

import (
	"errors"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// floodedPair returns a socket a flooded from b (flood) until stop is set,
// which t's cleanup does, and flood's channel.
func floodedPair(t *testing.T) (a, b *Socket, stop *atomic.Bool, flooded <-chan struct{}) {
	a, b, stop = listen(t, loopback4, Config{}), listen(t, loopback4, Config{}), new(atomic.Bool)
	t.Cleanup(func() { stop.Store(true) })
	return a, b, stop, flood(a, b, stop)
}

// flood sends to a batches of 32 datagrams of 100 B every 200 µs from b
// until stop is set or 3 s have passed; the returned channel closes when
// it has stopped. A handler that takes 500 µs a batch of 4 keeps ReadEach's
// batches full while it lasts.
func flood(a, b *Socket, stop *atomic.Bool) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		out := make([]Message, 32)
		for i := range out {
			out[i] = Message{Buf: make([]byte, 100), Addr: a.LocalAddr()}
		}
		end := time.Now().Add(3 * time.Second)
		for !stop.Load() && time.Now().Before(end) {
			_, _ = b.WriteBatch(out)
			time.Sleep(200 * time.Microsecond)
		}
	}()
	return done
}

// Close of a socket whose ReadEach keeps getting full batches (a flood, a
// slow handler) does not wait for the flood to end, and ReadEach returns
// an error wrapping net.ErrClosed (review B14 M3: Close returned 6 s later,
// when the queue had drained).
func TestReadEachCloseUnderFlood(t *testing.T) {
	a, _, stop, flooded := floodedPair(t)
	done := make(chan error, 1)
	var batches atomic.Int64
	go func() {
		done <- a.ReadEach(readBuffers(4, 256), func(n int) bool {
			batches.Add(1)
			time.Sleep(500 * time.Microsecond) // a busy handler
			return true
		})
	}()
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	closed := make(chan struct{})
	go func() { _ = a.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(time.Second):
		n0 := batches.Load()
		time.Sleep(100 * time.Millisecond)
		t.Errorf("Close still blocked after 1 s under the flood; ReadEach still handling batches (%d more in 100 ms)", batches.Load()-n0)
		stop.Store(true)
		<-closed
	}
	err := <-done
	t.Logf("Close returned after %v; ReadEach: %v (%d batches)", time.Since(t0), err, batches.Load())
	if !errors.Is(err, net.ErrClosed) {
		t.Errorf("ReadEach after Close: %v, want an error wrapping net.ErrClosed", err)
	}
	stop.Store(true)
	<-flooded
}

// A read deadline ends ReadEach, flood or not (the package doc: a reader
// is ended by Close or by a deadline), with an error wrapping
// os.ErrDeadlineExceeded (review B14 M3: it ran 2 s past a 200 ms
// deadline, ended by its handler).
func TestReadEachDeadlineUnderFlood(t *testing.T) {
	a, b, stop, flooded := floodedPair(t)
	if err := a.SetReadDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	err := a.ReadEach(readBuffers(4, 256), func(n int) bool {
		time.Sleep(500 * time.Microsecond)
		return time.Since(t0) < 2*time.Second // the test's own bound
	})
	took := time.Since(t0)
	stop.Store(true)
	<-flooded
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("ReadEach ran %v past a deadline of 200 ms: %v, want an error wrapping os.ErrDeadlineExceeded", took, err)
	}
	// A deadline moved away or cleared lets a later ReadEach run again.
	if err := a.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WriteBatch([]Message{{Buf: []byte("x"), Addr: a.LocalAddr()}}); err != nil {
		t.Fatal(err)
	}
	if err := a.ReadEach(readBuffers(4, 256), func(int) bool { return false }); err != nil {
		t.Errorf("ReadEach after the deadline was cleared: %v", err)
	}
}
