//go:build (amd64 || arm64) && !purego

package reduce

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestLevelFloat8AllPairs forces each supported level and runs every fp8
// op over all 256x256 pairs (a whole number of blocks, so all in vector
// lanes), out of place, in place, at odd offsets and shifted against the
// blocks with a tail, against the portable kernels bit for bit.
func TestLevelFloat8AllPairs(t *testing.T) {
	a, b := make([]byte, 1<<16), make([]byte, 1<<16)
	for i := range a {
		a[i], b[i] = byte(i), byte(i>>8)
	}
	eachFP8Kernel(t, func(what string, f fp8Case, op Op, fast, slow Kernel) {
		want := runAt(slow, [3]int{}, a, b)
		for _, off := range [][3]int{{}, {1, 3, 2}} {
			if got := runAt(fast, off, a, b); !bytes.Equal(got, want) {
				t.Fatalf("%s offsets %v: results differ from portable", what, off)
			}
		}
		in := clone(b)
		fast(in, a, in)
		if !bytes.Equal(in, want) {
			t.Fatalf("%s: dst = b differs from portable", what)
		}
		// The pairs without a byte x&0x7f == 0x7f (E4M3's NaNs),
		// packed: every block of a, b above has an E4M3 NaN, which
		// the AVX2 E4M3 kernels handle out of line a whole block at
		// a time, so these pairs take their usual path.
		na, nb := noNaNPairs(a, b)
		nwant := runAt(slow, [3]int{}, na, nb)
		ina, inb := clone(na), clone(nb)
		fast(ina, ina, nb)
		fast(inb, na, inb)
		if got := runAt(fast, [3]int{}, na, nb); !bytes.Equal(got, nwant) || !bytes.Equal(ina, nwant) || !bytes.Equal(inb, nwant) {
			t.Fatalf("%s: pairs without E4M3 NaNs (out of place, dst = a, dst = b): results differ from portable", what)
		}
		// Every pair again, shifted by 37 lanes against the
		// blocks and ending in a tail the blocks do not cover.
		for _, n := range []int{1<<16 - 37, 255} {
			got := make([]byte, n)
			fast(got, a[37:37+n], b[37:37+n])
			if !bytes.Equal(got, want[37:37+n]) {
				t.Fatalf("%s: pairs from 37, length %d: results differ from portable", what, n)
			}
		}
	})
}

// noNaNPairs returns the pairs of a and b with neither x&0x7f == 0x7f,
// padded to a multiple of 256 bytes by repeating the first.
func noNaNPairs(a, b []byte) (na, nb []byte) {
	for i := range a {
		if a[i]&0x7f != 0x7f && b[i]&0x7f != 0x7f {
			na, nb = append(na, a[i]), append(nb, b[i])
		}
	}
	for len(na)%256 != 0 {
		na, nb = append(na, na[0]), append(nb, nb[0])
	}
	return na, nb
}

// TestLevelFloat8NaNAnywhere forces each supported level and puts one NaN
// at each byte of a 1 KiB input in turn, in a or in b, the other bytes
// random finite values, against the portable kernels bit for bit: a kernel
// that tests a whole block for NaN at once must find it in every vector of
// the block and every lane, and put it back there alone.
func TestLevelFloat8NaNAnywhere(t *testing.T) {
	const n = 1024
	r := rand.New(rand.NewPCG(3, 4))
	finite := func() []byte {
		s := make([]byte, n)
		for i := range s {
			s[i] = byte(r.Uint32()) &^ 0x40 // no NaN or Inf in either format
		}
		return s
	}
	a, b := finite(), finite()
	nans := map[bool][2]byte{false: {0x7f, 0xff}, true: {0x7e, 0xfd}} // by hasInf: E4M3, E5M2
	eachFP8Kernel(t, func(what string, f fp8Case, op Op, fast, slow Kernel) {
		for p := range n {
			for in, src := range [][]byte{a, b} {
				x := clone(src)
				x[p] = nans[f.hasInf][p%2]
				xa, xb := a, x
				if in == 0 {
					xa, xb = x, b
				}
				want := runAt(slow, [3]int{}, xa, xb)
				if got := runAt(fast, [3]int{}, xa, xb); !bytes.Equal(got, want) {
					t.Fatalf("%s: NaN %#x at byte %d of input %d: results differ from portable", what, x[p], p, in)
				}
			}
		}
	})
}

// eachFP8Kernel forces each supported level in turn and calls f with every
// fp8 case and op's kernel at that level (fast) and its portable one
// (slow), what naming the three.
func eachFP8Kernel(t *testing.T, f func(what string, c fp8Case, op Op, fast, slow Kernel)) {
	for _, l := range supportedLevels(t) {
		withLevel(t, l, func() {
			for _, c := range fp8Cases {
				for _, op := range Ops() {
					fast, _ := Lookup(c.dt, op)
					slow, _ := Portable(c.dt, op)
					f(fmt.Sprintf("%s %v %v", l.name, c.dt, op), c, op, fast, slow)
				}
			}
		})
	}
}
