package tune

import (
	"math"
	"testing"
	"time"
)

// phaseBytes is the bytes of all of a phase's flows.
func phaseBytes(ph phase) float64 {
	var b float64
	for _, f := range ph.flows {
		b += f.bytes
	}
	return b
}

// TestHierRampPricesFillAndDrain: the hierarchical AllReduce's pieces
// start and end in a ramp (collective's hierPieceBounds), so the phases
// before the bottleneck (the WAN's ring of two on the lab's 2 x 2 x 2
// grid with host and site links of 300 MB/s) wait only for the first
// ramp piece (1/8 of a piece) and those after it for the last (1/16): the
// model prices those phases at those sizes, the bottleneck at a whole
// piece. Priced with even pieces throughout, gocoll sim's 16 MiB call
// (171.8 ms) was 0.80 of the model's 214.6 ms. One piece has no ramp.
func TestHierRampPricesFillAndDrain(t *testing.T) {
	topo := grid(t, 2, 2, 2)
	links := DefaultLinks()
	links.Host.Bandwidth, links.Site.Bandwidth = 300e6, 300e6
	const chunk = 2 << 20
	m := newModel(Input{Topology: topo, Bytes: 16 << 20, ChunkBytes: chunk, Links: links})
	p := HierPieces(16<<20, chunk, 8)
	if p != 4 {
		t.Fatalf("HierPieces = %d, want 4", p)
	}
	even := m.hierPhases([]problem{{m.identity(), float64(16<<20) / float64(p)}}, 0)
	got := m.hierarchical()
	if len(even) != 5 || len(got) != 6 {
		t.Fatalf("%d phases a piece and %d in all, want 5 and 6 (host, site, WAN, site, host; the rest)", len(even), len(got))
	}
	want := []float64{1.0 / 8, 1.0 / 8, 1, 1.0 / 16, 1.0 / 16}
	for i, w := range want {
		if r := phaseBytes(got[i]) / phaseBytes(even[i]); math.Abs(r-w) > 1e-9 {
			t.Errorf("phase %d carries %.4f of an even piece's bytes, want %.4f", i, r, w)
		}
	}
	one := newModel(Input{Topology: topo, Bytes: 4 << 20, ChunkBytes: chunk, Links: links})
	if HierPieces(4<<20, chunk, 8) != 1 {
		t.Fatal("4 MiB should be one piece")
	}
	whole := one.hierPhases([]problem{{one.identity(), 4 << 20}}, 0)
	for i, ph := range one.hierarchical() {
		if phaseBytes(ph) != phaseBytes(whole[i]) {
			t.Errorf("one piece: phase %d carries %v bytes, want %v (no ramp)", i, phaseBytes(ph), phaseBytes(whole[i]))
		}
	}
}

// TestHierRampOnlyWhereItPays: the pieces are cut in a ramp where the
// lower levels' phases take HierRampShare or more of the WAN's time a
// piece (the lab's 2 x 2 x 2 grid with host and site links of 300 MB/s:
// two thirds; the lab's probed file, its CPU figures included: 0.84), not
// where they are a tenth (the assumed links, 2 x 2 x 2 and 4 x 8 x 8) nor
// where the lower levels' rings take more than one step (oneStep),
// and the model prices the pieces even there (hierShared: the first phase
// beside the other pieces' steps of lower keys).
func TestHierRampOnlyWhereItPays(t *testing.T) {
	slow := DefaultLinks()
	slow.Host.Bandwidth, slow.Site.Bandwidth = 300e6, 300e6
	wan8 := DefaultLinks()
	wan8.WAN.Latency, wan8.WAN.Lanes = 5*time.Millisecond, 8
	for _, tc := range []struct {
		name string
		in   Input
		want bool
	}{
		{"2x2x2 assumed links, 4 MiB", Input{Topology: grid(t, 2, 2, 2), Bytes: 4 << 20, ChunkBytes: 512 << 10, Links: DefaultLinks()}, false},
		{"4x8x8 assumed links, 16 MiB", Input{Topology: grid(t, 4, 8, 8), Bytes: 16 << 20, ChunkBytes: 512 << 10, Links: DefaultLinks()}, false},
		{"2x2x2 300 MB/s, 16 MiB", Input{Topology: grid(t, 2, 2, 2), Bytes: 16 << 20, ChunkBytes: 2 << 20, Links: slow}, true},
		// The lower phases take 0.54 of the WAN's time a piece, but the
		// site rings have 31 steps (oneStep): gocoll sim 255.4 ms ramped,
		// 242.7 even.
		{"4x32x8 5 ms WAN of 8 paths, 64 MiB", Input{Topology: grid(t, 4, 32, 8), Bytes: 64 << 20, ChunkBytes: 512 << 10, Links: wan8}, false},
	} {
		if got := HierRamp(tc.in); got != tc.want {
			t.Errorf("%s: HierRamp %v, want %v", tc.name, got, tc.want)
		}
		m := newModel(tc.in)
		p := HierPieces(tc.in.Bytes, tc.in.ChunkBytes, m.n)
		even := m.hierPhases([]problem{{m.identity(), float64(tc.in.Bytes) / float64(p)}}, 0)
		got := m.hierarchical()
		want := 1.0 / 8 // the first ramp piece's
		if !tc.want {   // beside the other pieces' steps of lower keys (hierShared)
			var n int
			for k := range even[0].steps {
				n += min(k+1, p)
			}
			want = float64(n) / float64(max(1, even[0].steps))
		}
		if r := phaseBytes(got[0]) / phaseBytes(even[0]); math.Abs(r-want) > 1e-9 {
			t.Errorf("%s: the first phase priced at %.4f of an even piece's bytes, want %.4f (ramp %v)", tc.name, r, want, tc.want)
		}
	}
}
