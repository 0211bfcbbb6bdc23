// Part of bench/fp8_bound.sh's probe (copied into its package; under
// testdata, not built with the module).

package probe

import (
	"math"
	"os"
	"strings"
	"testing"
)

// value decodes an fp8 code (e4m3: 3 significand bits, bias 7; e5m2: 2, 15).
func value(e5 bool, c byte) float64 {
	mb, bias := 3, 7
	if e5 {
		mb, bias = 2, 15
	}
	m := int(c & 0x7f)
	e, f := m>>mb, float64(m&(1<<mb-1))
	v := math.Ldexp(f, 1-bias-mb)
	if e > 0 {
		v = math.Ldexp(f+float64(int(1)<<mb), e-bias-mb)
	}
	if c&0x80 != 0 {
		return -v
	}
	return v
}

// nearest is v rounded to nearest even by search (E4M3 saturating at 448,
// E5M2 to Inf from 61440).
func nearest(e5 bool, v float64) byte {
	top, s := byte(0x7e), byte(0)
	if e5 {
		top = 0x7b
	}
	if math.Signbit(v) {
		s, v = 0x80, -v
	}
	if e5 && v >= 61440 {
		return s | 0x7c
	}
	best := byte(0)
	for c := byte(1); c <= top; c++ {
		d, db := math.Abs(value(e5, c)-v), math.Abs(value(e5, best)-v)
		if d < db || d == db && c&1 == 0 {
			best = c
		}
	}
	return s | best
}

func TestCheck(t *testing.T) {
	if os.Getenv("CHECK") == "" {
		t.Skip("CHECK unset")
	}
	for _, f := range funcs {
		if !strings.HasPrefix(f.name, "c") {
			continue
		}
		e5 := strings.Contains(f.name, "E5M2")
		prod := strings.Contains(f.name, "Prod")
		bad := func(c byte) bool { return e5 && c&0x7c == 0x7c || !e5 && c&0x7f == 0x7f }
		var a, b, want []byte
		for x := range 256 {
			for y := range 256 {
				if bad(byte(x)) || bad(byte(y)) {
					continue
				}
				vx, vy := value(e5, byte(x)), value(e5, byte(y))
				r := vx + vy
				if prod {
					r = vx * vy
				}
				a, b, want = append(a, byte(x)), append(b, byte(y)), append(want, nearest(e5, r))
			}
		}
		for len(a)%64 != 0 {
			a, b, want = append(a, 0), append(b, 0), append(want, 0)
		}
		got := make([]byte, len(a))
		f.f(&got[0], &a[0], &b[0], len(a))
		n := 0
		for i := range got {
			if got[i] != want[i] {
				if n < 5 {
					t.Errorf("%s: %#02x, %#02x: got %#02x, want %#02x", f.name, a[i], b[i], got[i], want[i])
				}
				n++
			}
		}
		t.Logf("%s: %d pairs, %d wrong", f.name, len(a), n)
	}
}
