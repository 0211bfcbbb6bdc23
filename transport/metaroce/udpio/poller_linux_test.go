package udpio

import (
	"slices"
	"testing"
	"time"
)

func TestPollerReady(t *testing.T) {
	socks := []*Socket{listen(t, loopback4, Config{}), listen(t, loopback4, Config{}), listen(t, loopback4, Config{})}
	p, err := NewPoller(socks)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got, err := p.Ready(nil); err != nil || len(got) != 0 {
		t.Fatalf("Ready with nothing sent = %v, %v; want none", got, err)
	}
	tx := listen(t, loopback4, Config{})
	if _, err := tx.WriteBatch([]Message{{Buf: []byte("x"), Addr: socks[1].LocalAddr()}}); err != nil {
		t.Fatal(err)
	}
	var got []int
	// Loopback delivers within the send, or a busy machine's softirq a
	// little later.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		if got, err = p.Ready(got[:0]); err != nil || len(got) > 0 {
			break
		}
	}
	if err != nil || !slices.Equal(got, []int{1}) {
		t.Fatalf("Ready after a datagram to socket 1 = %v, %v; want [1]", got, err)
	}
	readDatagrams(t, socks[1], 1)
	if got, err := p.Ready(nil); err != nil || len(got) != 0 {
		t.Fatalf("Ready after the datagram was read = %v, %v; want none", got, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := p.Ready(nil); err != nil || len(got) != 0 {
		t.Fatalf("Ready after Close = %v, %v; want none", got, err)
	}
}

func TestPollerAdd(t *testing.T) {
	a, b := listen(t, loopback4, Config{}), listen(t, loopback4, Config{})
	p, err := NewPoller([]*Socket{a})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Add(0, b); err != nil {
		t.Fatal(err)
	}
	c := listen(t, loopback4, Config{})
	if _, err := c.WriteBatch([]Message{{Buf: []byte("x"), Addr: b.LocalAddr()}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var ready []int
	for len(ready) == 0 && time.Now().Before(deadline) {
		if ready, err = p.Ready(ready[:0]); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(ready, []int{0}) {
		t.Fatalf("Ready = %v, want the added socket under index 0", ready)
	}
}
