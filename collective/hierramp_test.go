package collective

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/inproc"
)

// TestHierPieceBoundsRamp: a call of several pieces starts and ends in a
// ramp of smaller ones (16 MiB in MetaRoCE's 2 MiB chunks on 8 ranks: 4
// pieces of 4 MiB become 512K 512K 1M 2M | 4M 4M | 2M 1M 512K 256K 256K),
// one piece stays whole, and the bounds cover the buffer in whole elements
// whatever its length.
func TestHierPieceBoundsRamp(t *testing.T) {
	const k, m = 1 << 10, 1 << 20
	got := hierPieceBounds(16*m, 2*m, 8, 4, true)
	var sizes []int
	for i := range len(got) - 1 {
		sizes = append(sizes, got[i+1]-got[i])
	}
	want := []int{512 * k, 512 * k, m, 2 * m, 4 * m, 4 * m, 2 * m, m, 512 * k, 256 * k, 256 * k}
	if !slices.Equal(sizes, want) {
		t.Errorf("16 MiB in 2 MiB chunks on 8 ranks: pieces %v, want %v", sizes, want)
	}
	if got := hierPieceBounds(4*m, 2*m, 8, 4, true); !slices.Equal(got, []int{0, 4 * m}) {
		t.Errorf("4 MiB (one piece): bounds %v, want [0 %d]", got, 4*m)
	}
	for _, bytes := range []int{16*m + 8*3, 64*m + 8*1001, 8*m - 8} {
		b := hierPieceBounds(bytes, 2*m, 8, 8, true)
		if b[0] != 0 || b[len(b)-1] != bytes {
			t.Errorf("%d B: bounds from %d to %d", bytes, b[0], b[len(b)-1])
		}
		for i := range len(b) - 1 {
			if b[i+1] <= b[i] || b[i]%8 != 0 {
				t.Errorf("%d B: piece %d is [%d, %d)", bytes, i, b[i], b[i+1])
			}
		}
	}
}

// TestHierTopRingInterleavesPieces: on 2 sites x 2 hosts x 2 ranks, a
// shard owner's sends to its peer across the WAN (the top level's ring of
// two) put the next piece's first step before this piece's second step,
// which must wait for the peer's first step to arrive (a WAN latency): so
// the connection has the next piece to carry meanwhile. With steps one
// key apart (topStride 1) piece q's second step came first, and every
// piece's halves were a latency apart on the WAN. The sums are checked.
func TestHierTopRingInterleavesPieces(t *testing.T) {
	const ranks, count = 8, 1 << 14 // float32: 64 KiB, 8 pieces of 8 KiB in 4 KiB chunks, ramped
	topo := gridTopology(t, 2, 2, 2)
	w, err := inproc.NewWorld(ranks)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var mu sync.Mutex
	orders := map[int][][2]int{} // rank -> (piece, step) of each send to its WAN peer, in queue order
	hierPipeRan = func(p *hierPipe) {
		mu.Lock()
		defer mu.Unlock()
		r := p.o.c.rank
		for _, e := range p.queues[(r+4)%8] {
			orders[r] = append(orders[r], [2]int{e.st.piece, e.i / e.st.g.k})
		}
	}
	defer func() { hierPipeRan = nil }()
	runHierAllReduceChecked(t, w, topo, count)
	if len(orders) != ranks {
		t.Fatalf("%d ranks ran the pipeline, want %d", len(orders), ranks)
	}
	for r, order := range orders {
		pieces := 0
		for _, ps := range order {
			pieces = max(pieces, ps[0]+1)
		}
		if pieces < 4 {
			t.Fatalf("rank %d: %d pieces crossed the WAN, want several: %v", r, pieces, order)
		}
		at := func(piece, step int) int { return slices.Index(order, [2]int{piece, step}) }
		for q := range pieces - 1 {
			if next, second := at(q+1, 0), at(q, 1); next < 0 || second < 0 || next > second {
				t.Errorf("rank %d: piece %d's first step at %d of its WAN sends, piece %d's second at %d: want the first before (%v)", r, q+1, next, q, second, order)
				break
			}
		}
	}
}

// TestHierRampReadsTheLinks: a communicator cuts its hierarchical
// pieces in a ramp where its topology's link figures make the lower
// levels a noticeable share of the WAN's time (host and site links of
// 300 MB/s against a WAN of 100 MB/s), not with the assumed figures
// (shared memory 4 GB/s, LAN 1.25 GB/s), where the ramp's further pieces
// cost more than it saves (gocoll sim, the lab's grid, 4 MiB: 46.3 ms
// ramped, 44.7 even); one piece is never cut.
func TestHierRampReadsTheLinks(t *testing.T) {
	const m = 1 << 20
	slow := topology.Link{Latency: 20 * time.Microsecond, Bandwidth: 300e6}
	wan := topology.Link{Latency: 2 * time.Millisecond, Bandwidth: 100e6}
	for _, tc := range []struct {
		links *topology.Links
		want  bool
	}{{nil, false}, {&topology.Links{Host: &slow, Site: &slow, WAN: &wan}, true}} {
		topo := gridTopology(t, 2, 2, 2)
		topo.Links = tc.links
		w, err := inproc.NewWorld(8)
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(w.Endpoints()[0], 1, Config{Topology: topo, ChunkBytes: 2 * m})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.hierRamp(16 * m); got != tc.want {
			t.Errorf("links %+v: hierRamp(16 MiB) %v, want %v", tc.links, got, tc.want)
		}
		bounds := hierPieceBounds(16*m, 2*m, 8, 4, c.hierRamp(16*m))
		if ramped := len(bounds)-1 > hierPieces(16*m, 2*m, 8); ramped != tc.want {
			t.Errorf("links %+v: %d pieces, ramped %v, want %v", tc.links, len(bounds)-1, ramped, tc.want)
		}
		_ = c.Close()
		_ = w.Close()
	}
}
