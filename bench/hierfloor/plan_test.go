package main

import (
	"testing"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// The plan's bytes are the hierarchical AllReduce's on 2 x 2 x 2 ranks:
// S/2 in the host, S/4 each way over the LAN (twice) and the WAN (once),
// with the counterpart on the other host (rank^2) and the other site's
// shard owner (rank^4).
func TestPlan(t *testing.T) {
	const s = 16 << 20
	for r := range World {
		ps, err := Plan(r, s)
		if err != nil {
			t.Fatal(err)
		}
		want := []Phase{
			{"host-rs", KindMem, -1, s / 2, true},
			{"lan-rs", KindLAN, r ^ 2, s / 4, true},
			{"wan-ar", KindWAN, r ^ 4, s / 4, true},
			{"lan-ag", KindLAN, r ^ 2, s / 4, false},
			{"host-ag", KindMem, -1, s / 2, false},
		}
		if len(ps) != len(want) {
			t.Fatalf("rank %d: %d phases", r, len(ps))
		}
		for i := range ps {
			if ps[i] != want[i] {
				t.Errorf("rank %d phase %d: %+v, want %+v", r, i, ps[i], want[i])
			}
		}
	}
	for _, bad := range [][2]int{{-1, s}, {World, s}, {0, 0}, {0, 17}} {
		if _, err := Plan(bad[0], bad[1]); err == nil {
			t.Errorf("Plan(%d, %d): no error", bad[0], bad[1])
		}
	}
}

func TestHeader(t *testing.T) {
	b := make([]byte, HeaderLen+3)
	h := Header{Call: 7, Phase: 2, Offset: 1 << 40}
	h.Put(b)
	got, p, err := ParseHeader(b)
	if err != nil || got != h || len(p) != 3 {
		t.Fatalf("ParseHeader: %+v %d %v", got, len(p), err)
	}
	if _, _, err := ParseHeader(b[:HeaderLen-1]); err == nil {
		t.Error("short datagram: no error")
	}
	b[0]++
	if _, _, err := ParseHeader(b); err == nil {
		t.Error("bad magic: no error")
	}
}

// Span's pieces tile the bytes in order, every piece but the last a
// multiple of align.
func TestSpan(t *testing.T) {
	for _, c := range [][3]int{{4 << 20, 8, payloadLen}, {8 << 20, 8, memAlign}, {100, 8, 64}, {5, 1, 4}, {payloadLen, 3, payloadLen}} {
		n, pieces, align := c[0], c[1], c[2]
		end := 0
		for p := range pieces {
			off, l := Span(n, pieces, align, p)
			if off != end || l < 0 {
				t.Fatalf("%v piece %d: off %d len %d, want off %d", c, p, off, l, end)
			}
			if end += l; end < n && l%align != 0 {
				t.Errorf("%v piece %d: len %d not a multiple of %d", c, p, l, align)
			}
		}
		if end != n {
			t.Errorf("%v: pieces end at %d", c, end)
		}
	}
}

// The inbox counts a phase's pieces as they come, and ignores what is not
// a piece of a network phase within range.
func TestInboxTake(t *testing.T) {
	const s = 1 << 20
	ps, _ := Plan(0, s)
	sum, _ := reduce.Lookup(dtype.Float32, reduce.Sum)
	in := newInbox(ps, 1, 2, make([]byte, s), sum)
	d := make([]byte, HeaderLen+payloadLen)
	for off := 0; off < s/4; off += payloadLen {
		n := min(payloadLen, s/4-off)
		Header{Phase: 1, Offset: uint64(off)}.Put(d)
		in.take(d[:HeaderLen+n])
	}
	for p := range 2 {
		select {
		case <-in.done[in.index(0, 1, p)]:
		default:
			t.Errorf("piece %d not done", p)
		}
	}
	for _, h := range []Header{{Phase: 0}, {Phase: 9}, {Call: 1, Phase: 1}, {Phase: 2, Offset: s}} {
		h.Put(d)
		in.take(d)
	}
	in.take(d[:3])
	if got := in.bad.Load(); got != 5 {
		t.Errorf("bad %d, want 5", got)
	}
}
