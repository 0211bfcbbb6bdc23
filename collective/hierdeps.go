package collective

import (
	"slices"
	"sort"
)

// The hierarchical pipeline's dependencies, chunk by chunk (see
// hierpipe.go): a send may be posted once every receive that last wrote
// the bytes it reads has been taken, and a receive taken once every
// receive that wrote its bytes before it has been. "Before" and "last" are
// in the program order of the rank's piece: its rings in turn (a level's
// reduce-scatter, the levels above, its all-gather), each step's sends
// (which read) before its receives (which write). So the next level's
// send of a chunk waits for the lower level's receives of that chunk's
// bytes only, not for the whole lower ring: the levels overlap chunk by
// chunk without more messages. Every dependency is a receive of a lower
// key than the send or receive that has it (a ring's keys follow its
// piece's program order), so the argument of hierpipe.go holds.

// writers maps the bytes of a piece written so far to the wait position
// of the receive that last wrote them: sorted, disjoint ranges.
type writers []writer

type writer struct{ lo, hi, w int }

// query appends to dst the wait positions of the last writers of any byte
// of [lo, hi).
func (ws writers) query(lo, hi int, dst []int) []int {
	for i := ws.from(lo); i < len(ws) && ws[i].lo < hi; i++ {
		if ws[i].hi > lo && (len(dst) == 0 || dst[len(dst)-1] != ws[i].w) {
			dst = append(dst, ws[i].w)
		}
	}
	return dst
}

// from is the index of the first range that ends after lo.
func (ws writers) from(lo int) int {
	return sort.Search(len(ws), func(i int) bool { return ws[i].hi > lo })
}

// set records receive w as the last writer of [lo, hi).
func (ws *writers) set(lo, hi, w int) {
	if lo >= hi {
		return
	}
	s := *ws
	a := s.from(lo)
	b := a
	for b < len(s) && s[b].lo < hi {
		b++
	}
	var put [3]writer
	n := 0
	if a < b && s[a].lo < lo {
		put[n], n = writer{s[a].lo, lo, s[a].w}, n+1
	}
	put[n], n = writer{lo, hi, w}, n+1
	if a < b && s[b-1].hi > hi {
		put[n], n = writer{hi, s[b-1].hi, s[b-1].w}, n+1
	}
	*ws = slices.Replace(s, a, b, put[:n]...)
}

// dependencies fills in, walking each piece's rings in program order, the
// dependencies of every receive (by wait position) and queues every send
// with its own, per peer.
func (p *hierPipe) dependencies(stages []*hstage, pieces int) {
	byPiece := make([]writers, pieces)
	var scratch, all []int
	deps := func() []int { // a copy of scratch, in all's backing
		all = append(all, scratch...)
		return all[len(all)-len(scratch) : len(all) : len(all)]
	}
	for _, s := range stages {
		ws := &byPiece[s.piece]
		for step := range s.steps {
			for c := range s.g.k {
				i := step*s.g.k + c
				_, seg, _ := s.segs(i)
				lo, hi := s.g.span(seg, c)
				scratch = ws.query(lo, hi, scratch[:0])
				p.queues[s.right] = append(p.queues[s.right], hsend{st: s, i: i, key: s.stepKey(step), deps: deps()})
			}
			for c := range s.g.k {
				i := step*s.g.k + c
				_, _, seg := s.segs(i)
				lo, hi := s.g.span(seg, c)
				w := s.pos[i]
				scratch = ws.query(lo, hi, scratch[:0])
				p.recvs[w].deps = deps()
				ws.set(lo, hi, w)
			}
		}
	}
}
