package collective

import (
	"sync"
	"testing"

	"github.com/gocoll/gocoll/transport/inproc"
)

// TestHierStartOrder: on 2 sites x 2 hosts x 2 ranks and 2 x 2 x 4, every
// rank's pipeline (several pieces) has a start (hierStartPieces), waits for
// its receives in (class, key, piece, index) order, every receive's and
// every queued send's dependencies come before it in that order (the
// deadlock-freedom argument of hierpipe.go), every start send of the top
// level was posted (startLeft 0), and every sum is exact.
func TestHierStartOrder(t *testing.T) {
	for _, g := range [][3]int{{2, 2, 2}, {2, 2, 4}} {
		ranks := g[0] * g[1] * g[2]
		topo := gridTopology(t, g[0], g[1], g[2])
		w, err := inproc.NewWorld(ranks)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		pipes := 0
		hierPipeRan = func(p *hierPipe) {
			mu.Lock()
			defer mu.Unlock()
			pipes++
			checkHierStartOrder(t, p)
		}
		runHierAllReduceChecked(t, w, topo, 1<<18)
		hierPipeRan = nil
		w.Close()
		if pipes != ranks {
			t.Errorf("%v: %d ranks ran the pipeline, want %d", g, pipes, ranks)
		}
	}
}

// checkHierStartOrder checks one rank's pipeline after its run (see
// TestHierStartOrder).
func checkHierStartOrder(t *testing.T, p *hierPipe) {
	t.Helper()
	before := func(d int, st *hstage, i, key int) bool {
		r := p.recvs[d]
		return hevCompare(r.st, r.i, r.key, st, i, key) < 0
	}
	pieces, start := map[int]bool{}, 0
	for w, r := range p.recvs {
		pieces[r.st.piece] = true
		if r.st.class(r.i) == 0 {
			start++
		}
		if w > 0 && !before(w-1, r.st, r.i, r.key) {
			t.Errorf("receive %d comes before receive %d in the wait order", w, w-1)
		}
		for _, d := range r.deps {
			if !before(d, r.st, r.i, r.key) {
				t.Errorf("receive %d depends on receive %d, not before it", w, d)
			}
		}
	}
	for peer, q := range p.queues {
		for _, e := range q {
			for _, d := range e.deps {
				if !before(d, e.st, e.i, e.key) {
					t.Errorf("a send to %d (piece %d, key %d) depends on receive %d, not before it", peer, e.st.piece, e.key, d)
				}
			}
		}
	}
	if len(pieces) < 2 || start == 0 {
		t.Errorf("%d pieces, %d receives of the start: want several pieces and a start", len(pieces), start)
	}
	if p.startLeft != 0 {
		t.Errorf("%d start sends of the top level never posted", p.startLeft)
	}
}
