//go:build (amd64 || arm64) && !purego

package reduce

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/gocoll/gocoll/collective/dtype"
)

// TestLevelHalfAllValues forces each supported level and runs the
// 16-bit float kernels (every op) with every bit pattern as a, against b its
// neighbour, its negation, itself and strided permutations, with NaNs as
// they are (most vectors then take the out-of-line NaN path) and with
// every NaN replaced by an infinity (every vector on the integer fast
// path), against the portable kernels bit for bit.
func TestLevelHalfAllValues(t *testing.T) {
	const n = 1 << 16
	type pattern struct {
		name string
		of   func(i int) int
	}
	pats := []pattern{
		{"same", func(i int) int { return i }},
		{"next", func(i int) int { return i + 1 }},
		{"negated", func(i int) int { return i ^ 0x8000 }},
		{"stride 257", func(i int) int { return i*257 + 11 }},
		{"stride 40503", func(i int) int { return i*40503 + 7 }},
		{"reversed", func(i int) int { return n - 1 - i }},
	}
	for _, l := range supportedLevels(t) {
		withLevel(t, l, func() {
			for _, dt := range []dtype.DataType{dtype.BFloat16Type, dtype.Float16Type} {
				inf := uint16(0x7c00)
				if dt == dtype.BFloat16Type {
					inf = 0x7f80
				}
				for _, nans := range []bool{true, false} {
					fix := func(v int) uint16 {
						x := uint16(v)
						if !nans && x&0x7fff > inf {
							x = x&0x8000 | inf
						}
						return x
					}
					for _, p := range pats {
						a, b := make([]byte, 2*n), make([]byte, 2*n)
						for i := range n {
							binary.LittleEndian.PutUint16(a[2*i:], fix(i))
							binary.LittleEndian.PutUint16(b[2*i:], fix(p.of(i)))
						}
						for _, op := range Ops() {
							fast, _ := Lookup(dt, op)
							slow, _ := Portable(dt, op)
							what := fmt.Sprintf("%s %v %v b %s (NaNs %v)", l.name, dt, op, p.name, nans)
							for _, pair := range [][2][]byte{{a, b}, {b, a}} {
								got, want := runAt(fast, [3]int{}, pair[0], pair[1]), runAt(slow, [3]int{}, pair[0], pair[1])
								if !bytes.Equal(got, want) {
									for i := 0; i < len(got); i += 2 {
										if !bytes.Equal(got[i:i+2], want[i:i+2]) {
											t.Fatalf("%s: %x op %x = %x, want %x", what,
												pair[0][i:i+2], pair[1][i:i+2], got[i:i+2], want[i:i+2])
										}
									}
								}
							}
						}
					}
				}
			}
		})
	}
}
