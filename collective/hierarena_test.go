package collective

import "testing"

// TestHierArenaRing: the arena lends blocks in order from its chunk
// buffers as one ring, never across two buffers, refuses a block that
// would reach its oldest live block, passes blocks freed out of order only
// once every block before them is freed, and an empty arena always has
// room for a whole buffer.
func TestHierArenaRing(t *testing.T) {
	const size = 100
	a := hierArena{bufs: [][]byte{make([]byte, size), make([]byte, size)}, size: size}
	where := func(b []byte) (int, int) { // buffer, offset
		for i, buf := range a.bufs {
			if &buf[:cap(buf)][cap(buf)-1] == &b[:cap(b)][cap(b)-1] {
				return i, size - cap(b)
			}
		}
		t.Fatal("block outside the arena's buffers")
		return -1, -1
	}
	lend := func(n int, wantBuf, wantOff int) int {
		t.Helper()
		b, id, ok := a.lend(n)
		if !ok {
			t.Fatalf("lend(%d) refused, want buffer %d at %d", n, wantBuf, wantOff)
		}
		if len(b) != n {
			t.Fatalf("lend(%d) gave %d bytes", n, len(b))
		}
		if i, off := where(b); i != wantBuf || off != wantOff {
			t.Fatalf("lend(%d) at buffer %d offset %d, want %d at %d", n, i, off, wantBuf, wantOff)
		}
		return id
	}
	refused := func(n int) {
		t.Helper()
		if _, _, ok := a.lend(n); ok {
			t.Fatalf("lend(%d) lent, want refused (head %d, tail %d)", n, a.head, a.tail)
		}
	}
	x := lend(40, 0, 0)
	y := lend(40, 0, 40)
	z := lend(30, 1, 0) // does not fit in buffer 0's last 20: starts buffer 1
	w := lend(70, 1, 30)
	refused(1) // both buffers taken up to x, the oldest
	a.free(y)  // behind x: the tail stays
	refused(1)
	a.free(x) // x and y passed: buffer 0 is free again
	v := lend(80, 0, 0)
	refused(30)
	a.free(w) // behind z
	refused(30)
	a.free(z)
	u := lend(100, 1, 0)
	a.free(v)
	a.free(u)
	if len(a.blocks) != 0 {
		t.Fatalf("%d blocks live after every block was freed", len(a.blocks))
	}
	lend(size, 0, 0) // empty: a whole buffer fits, wherever the head was
}
