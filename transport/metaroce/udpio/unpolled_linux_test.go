package udpio

import (
	"errors"
	"net"
	"os"
	"slices"
	"testing"
	"time"
)

// TestPollerWaitUnpolled: unpolled sockets read through a Poller's Wait
// and a TryReader; a Wait with nothing to read ends at its timeout, a Wait
// re-armed after a wake wakes again for what is still unread, and Close
// ends a Wait.
func TestPollerWaitUnpolled(t *testing.T) {
	socks := []*Socket{listen(t, loopback4, Config{Unpolled: true}), listen(t, loopback4, Config{Unpolled: true})}
	p, err := NewPoller(socks)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	if err := p.Wait(20 * time.Millisecond); err != nil {
		t.Fatalf("Wait with nothing sent: %v", err)
	}
	if d := time.Since(start); d < 15*time.Millisecond {
		t.Fatalf("Wait with nothing sent returned after %v, before its timeout", d)
	}
	tx := listen(t, loopback4, Config{})
	if _, err := tx.WriteBatch([]Message{{Buf: []byte("x"), Addr: socks[1].LocalAddr()}}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second Wait re-arms with the datagram still queued
		if err := p.Wait(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		if got, err := p.Ready(nil); err != nil || !slices.Equal(got, []int{1}) {
			t.Fatalf("Ready after Wait = %v, %v; want [1]", got, err)
		}
	}
	ms := []Message{{Buf: make([]byte, 64)}}
	if n, err := NewTryReader(socks[1], 1).ReadBatch(ms); err != nil || n != 1 || string(ms[0].Buf[:ms[0].N]) != "x" {
		t.Fatalf("TryReader.ReadBatch = %d, %v, %q; want the datagram", n, err, ms[0].Buf[:ms[0].N])
	}
	done := make(chan error, 1)
	go func() { done <- p.Wait(time.Minute) }()
	time.Sleep(10 * time.Millisecond)
	p.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Wait ended by Close: %v; want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a Wait")
	}
}

// TestPollerWaitNoAllocations: once a Wait has made the outer set, a
// Wait (here one that returns at once: a datagram stays queued) allocates
// nothing.
func TestPollerWaitNoAllocations(t *testing.T) {
	rx := listen(t, loopback4, Config{Unpolled: true})
	p, err := NewPoller([]*Socket{rx})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tx := listen(t, loopback4, Config{})
	if _, err := tx.WriteBatch([]Message{{Buf: []byte("x"), Addr: rx.LocalAddr()}}); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(time.Minute); err != nil { // waits for the datagram, makes the outer set
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(50, func() {
		if err := p.Wait(time.Minute); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Wait allocated %v times a call; want 0", allocs)
	}
}

// TestUnpolledSocketCalls: an unpolled socket's blocking calls still work
// (in poll slices): ReadBatch gets a datagram, a read deadline and Close
// end a waiting ReadBatch, and a second Close fails with net.ErrClosed.
func TestUnpolledSocketCalls(t *testing.T) {
	s := listen(t, loopback4, Config{Unpolled: true})
	tx := listen(t, loopback4, Config{Unpolled: true})
	if _, err := tx.WriteBatch([]Message{{Buf: []byte("hello"), Addr: s.LocalAddr()}}); err != nil {
		t.Fatal(err)
	}
	got := readDatagrams(t, s, 1)
	if string(got[0].data) != "hello" || got[0].from != tx.LocalAddr() {
		t.Fatalf("read %q from %v; want hello from %v", got[0].data, got[0].from, tx.LocalAddr())
	}
	ms := []Message{{Buf: make([]byte, 64)}}
	if err := s.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadBatch(ms); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("ReadBatch past its deadline: %v; want os.ErrDeadlineExceeded", err)
	}
	if err := s.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.ReadBatch(ms); done <- err }()
	time.Sleep(10 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("ReadBatch ended by Close: %v; want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a ReadBatch")
	}
	if err := s.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second Close: %v; want net.ErrClosed", err)
	}
}
