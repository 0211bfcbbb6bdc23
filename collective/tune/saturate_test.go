package tune

import (
	"math"
	"testing"
	"time"
)

// A prediction beyond a Duration's range (a valid but slow link, 2 B/s
// over the WAN, and calls of 16-24 GiB) saturates at the longest Duration
// instead of wrapping negative, and the order stays the seconds' order:
// the chosen algorithm is never one whose time overflowed while another's
// did not.
func TestPredictionSaturates(t *testing.T) {
	links := DefaultLinks()
	links.WAN = Link{Latency: 2 * time.Millisecond, Bandwidth: 2}
	in := Input{Topology: grid(t, 2, 2, 2), ChunkBytes: 512 << 10, Links: links}
	for _, b64 := range []int64{16 << 30, 18 << 30, 20 << 30, 22 << 30, 24 << 30} {
		b := int(b64)
		if int64(b) != b64 {
			t.Skip("calls of 16-24 GiB do not fit a 32-bit int")
		}
		in.Bytes = b
		ps, err := Predict(AllReduce, in)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d bytes: choice %s %v", b, ps[0].Algorithm, ps[0].Time)
		for i, p := range ps {
			if p.Time <= 0 {
				t.Errorf("%d bytes: %s predicted %v: the seconds overflowed a Duration", b, p.Algorithm, p.Time)
			}
			if i > 0 && p.Time < ps[i-1].Time {
				t.Errorf("%d bytes: not sorted: %s %v after %s %v", b, p.Algorithm, p.Time, ps[i-1].Algorithm, ps[i-1].Time)
			}
		}
	}
	if ps, _ := Predict(AllReduce, in); ps[len(ps)-1].Time != math.MaxInt64 {
		t.Errorf("24 GiB at 2 B/s: slowest %v, want the longest Duration", ps[len(ps)-1].Time)
	}
	for _, c := range []struct {
		s    float64
		want time.Duration
	}{{1.5, 1500 * time.Millisecond}, {1e12, math.MaxInt64}, {math.Inf(1), math.MaxInt64}, {math.NaN(), math.MaxInt64}, {-1, 0}} {
		if got := duration(c.s); got != c.want {
			t.Errorf("duration(%v) = %v, want %v", c.s, got, c.want)
		}
	}
}
