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
// piece's program order), and of class 0 where that one is (hstage.class:
// a reduce-scatter or the top level's first step reads and writes only
// bytes that the piece's reduce-scatters wrote before it), so the argument
// of hierpipe.go holds.

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

// covered returns how many bytes of [lo, hi) have a writer.
func (ws writers) covered(lo, hi int) int {
	n := 0
	for i := ws.from(lo); i < len(ws) && ws[i].lo < hi; i++ {
		n += min(hi, ws[i].hi) - max(lo, ws[i].lo)
	}
	return n
}

// gaps appends to dst the ranges of [lo, hi) no receive writes.
func (ws writers) gaps(lo, hi int, dst [][2]int) [][2]int {
	at := lo
	for i := ws.from(lo); i < len(ws) && ws[i].lo < hi; i++ {
		if ws[i].lo > at {
			dst = append(dst, [2]int{at, ws[i].lo})
		}
		at = max(at, ws[i].hi)
	}
	if at < hi {
		dst = append(dst, [2]int{at, hi})
	}
	return dst
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
//
// Out of place (src and buf differ), the same walk finds where buf still
// lacks this rank's contribution, which the phases would otherwise have
// needed copied in up front: a send of bytes no receive has written
// before it reads src (hstage.srcSend), a reduction into such bytes takes
// its own side from src (srcRecv), and the bytes of a piece no receive
// writes at all are copied at the end (late). A send or reduction that
// finds its bytes partly written (no plan does: each ring's segments are
// the lower level's owned segments, written whole or not at all) makes
// the call copy src up front after all.
func (p *hierPipe) dependencies(stages []*hstage, regions [][2]int) {
	byPiece := make([]writers, len(regions))
	oop := !sameRegion(p.src, p.buf)
	partial := false
	// first reports whether none of [lo, hi) has been written, noting a
	// range written in part.
	first := func(ws writers, lo, hi int) bool {
		cov := ws.covered(lo, hi)
		partial = partial || (cov > 0 && cov < hi-lo)
		return cov == 0 && hi > lo
	}
	var scratch, all []int
	deps := func() []int { // a copy of scratch, in all's backing
		all = append(all, scratch...)
		return all[len(all)-len(scratch) : len(all) : len(all)]
	}
	for _, s := range stages {
		ws := &byPiece[s.piece]
		if oop {
			s.srcSend, s.srcRecv = make([]bool, s.total()), make([]bool, s.total())
		}
		for step := range s.steps {
			for c := range s.g.k {
				i := step*s.g.k + c
				_, seg, _ := s.segs(i)
				lo, hi := s.g.span(seg, c)
				scratch = ws.query(lo, hi, scratch[:0])
				if oop {
					s.srcSend[i] = first(*ws, lo, hi)
				}
				p.queues[s.right] = append(p.queues[s.right], hsend{st: s, i: i, key: s.stepKey(step), deps: deps()})
			}
			for c := range s.g.k {
				i := step*s.g.k + c
				_, _, seg := s.segs(i)
				lo, hi := s.g.span(seg, c)
				w := s.pos[i]
				scratch = ws.query(lo, hi, scratch[:0])
				if oop && s.rsReceive(i) {
					s.srcRecv[i] = first(*ws, lo, hi)
				}
				p.recvs[w].deps = deps()
				ws.set(lo, hi, w)
			}
		}
	}
	if !oop {
		return
	}
	if partial {
		for _, s := range stages {
			s.srcSend, s.srcRecv = nil, nil
		}
		copy(p.buf, p.src)
		return
	}
	for q, r := range regions {
		p.late = byPiece[q].gaps(r[0], r[1], p.late)
	}
}
