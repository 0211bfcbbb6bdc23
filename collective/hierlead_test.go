package collective

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gocoll/gocoll/transport/inproc"
)

// TestHierLeadPacesTheFirstRing: in the pipelined hierarchical AllReduce
// (2 sites x 2 hosts x 2 ranks over inproc, 1 MiB in 4 KiB chunks, a dozen
// pieces), a rank posts a send with no dependencies (its first ring's
// first step) of piece q >= hierLead only once it has taken every receive
// of piece q-hierLead with a lower key (hierLead); every sum is checked.
// Without the bound each rank posted every piece's first step at once,
// before taking any receive.
func TestHierLeadPacesTheFirstRing(t *testing.T) {
	const ranks, count = 8, 1 << 18 // float32: 1 MiB
	if hierLead < 1 {
		t.Fatalf("hierLead is %d: no bound", hierLead)
	}
	w, err := inproc.NewWorld(ranks)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var mu sync.Mutex
	gated, pieces := 0, 0
	var bad []string
	hierSendPosted = func(p *hierPipe, e hsend) {
		mu.Lock()
		defer mu.Unlock()
		pieces = max(pieces, len(p.byPiece))
		if len(e.deps) > 0 || e.st.piece < hierLead || e.st.kind == allSteps || e.st.kind == exchangeStep {
			return
		}
		gated++
		for _, v := range p.byPiece[e.st.piece-hierLead] {
			if p.recvs[v].key < e.key && !p.waited[v] {
				bad = append(bad, fmt.Sprintf("send of piece %d key %d before receive %d (key %d) of piece %d was taken",
					e.st.piece, e.key, v, p.recvs[v].key, e.st.piece-hierLead))
				return
			}
		}
	}
	defer func() { hierSendPosted = nil }()
	runHierAllReduceChecked(t, w, gridTopology(t, 2, 2, 2), count)
	if pieces < 3 || gated == 0 {
		t.Fatalf("%d pieces, %d sends under the bound: the test needs more", pieces, gated)
	}
	if len(bad) > 0 {
		t.Fatalf("%d of %d sends ran ahead, first: %s", len(bad), gated, bad[0])
	}
	t.Logf("%d pieces, %d sends under the bound", pieces, gated)
}
