package tune

import (
	"math"
	"testing"
)

// TestFlatRingEndsWhenItsLastByteLands: a bandwidth-bound flat ring
// AllReduce ends one latency of its busiest link after that link's load,
// when its last byte lands: on the two-site 2x2x2 grid at 4 MiB, the WAN
// crossing (3 -> 4) carries 2(n-1)/n S at 100 MB/s (73.4 ms), plus the
// WAN's 2 ms one way. gocoll sim times it at 75.44 ms (data mode); before
// the operation's last phase priced the flight, the model said 73.43 ms.
func TestFlatRingEndsWhenItsLastByteLands(t *testing.T) {
	const size = 4 << 20
	links := DefaultLinks()
	ps, err := Predict(AllReduce, Input{Topology: grid(t, 2, 2, 2), Bytes: size, ChunkBytes: 512 << 10, Channels: 1, Links: links, IdealTransport: true})
	if err != nil {
		t.Fatal(err)
	}
	want := 2*7.0/8*size/links.WAN.Bandwidth + links.WAN.Latency.Seconds()
	for _, p := range ps {
		if p.Algorithm != "ring" {
			continue
		}
		if got := p.Time.Seconds(); math.Abs(got-want) > want*1e-3 {
			t.Fatalf("ring %d B: %.3f ms, want the WAN crossing's load plus its latency, %.3f ms", size, got*1e3, want*1e3)
		}
		return
	}
	t.Fatal("no ring prediction")
}
