//go:build linux

package shm

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSendTable: words are handed out from 0 up and come back when their
// sends are dropped; has tells a send in flight from one dropped (or never
// taken, or of another place); each visits every send in flight once,
// even when it drops the one it is given, in any order of drops.
func TestSendTable(t *testing.T) {
	const words = 8
	tab := newSendTable(words)
	reqs := make([]*request, words)
	for i := range reqs {
		if tab.full() {
			t.Fatalf("full after %d of %d words", i, words)
		}
		reqs[i] = &request{index: -1, live: -1}
		tab.take(reqs[i])
		if reqs[i].index != i {
			t.Fatalf("send %d got word %d, want %d", i, reqs[i].index, i)
		}
	}
	if !tab.full() {
		t.Fatal("not full with every word taken")
	}
	stranger := &request{index: 3, live: 3}
	if tab.has(stranger) {
		t.Fatal("has a request it never took")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		// Drop a random half from inside each, then take them again.
		drop := map[*request]bool{}
		for _, r := range reqs {
			if rng.IntN(2) == 0 {
				drop[r] = true
			}
		}
		var seen []*request
		tab.each(func(r *request) {
			seen = append(seen, r)
			if drop[r] {
				tab.drop(r)
				if tab.has(r) {
					t.Fatalf("round %d: has a dropped send", round)
				}
			}
		})
		if len(seen) != words {
			t.Fatalf("round %d: each visited %d sends, want %d", round, len(seen), words)
		}
		for _, r := range reqs {
			if n := countOf(seen, r); n != 1 {
				t.Fatalf("round %d: each visited a send %d times", round, n)
			}
			if tab.has(r) == drop[r] {
				t.Fatalf("round %d: has = %v for a send dropped: %v", round, tab.has(r), drop[r])
			}
		}
		var used []int
		for _, r := range tab.all() {
			used = append(used, r.index)
		}
		for r := range drop {
			tab.take(r)
			used = append(used, r.index)
		}
		slices.Sort(used)
		if !slices.Equal(used, []int{0, 1, 2, 3, 4, 5, 6, 7}) || !tab.full() {
			t.Fatalf("round %d: words in use %v, want each of 0-7 once", round, used)
		}
	}
}

func countOf(s []*request, r *request) (n int) {
	for _, x := range s {
		if x == r {
			n++
		}
	}
	return n
}
