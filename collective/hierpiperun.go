package collective

import (
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// The hierarchical pipeline's runner (see hierpipe.go for the plan and
// the order of its messages).

// run takes every receive of the plan (next says which, when), reducing
// or placing it, and posts each send once its receive has been taken.
func (p *hierPipe) run() error {
	p.pump()
	for p.done < len(p.recvs) {
		if err := p.post(p.done+1, true); err != nil {
			return err
		}
		if err := p.post(p.done+p.ahead, false); err != nil {
			return err
		}
		w, err := p.next()
		if err != nil {
			return err
		}
		if err := p.o.waitRecv(p.pending[w]); err != nil {
			return err
		}
		if err := p.finishRecv(w); err != nil {
			return err
		}
		p.waited[w] = true
		p.rdy.taken(w)
		for p.done < len(p.recvs) && p.waited[p.done] {
			p.done++
		}
		p.pump()
	}
	return nil
}

// next returns the wait position of the receive to take next: of the
// posted receives that are ready (hierdeps.go), the first that has
// arrived, else, once one has, the first to arrive. So a receive that is
// late (a WAN message) does not hold one that is there and whose bytes
// it does not touch (a LAN message of the chunk after it, which another
// rank's WAN send waits for): each receive's own conditions (its
// dependencies, its chunk buffer, the send that read where it lands) hold
// whatever the order. It looks at each sender's first ready receive only
// (hierready.go): a pair's messages are sent in the order they are
// received, so the later ones of a sender mostly arrive after it, and a
// call costs O(senders) however many receives are posted ahead. The
// lowest receive not waited for is always ready (so it is its sender's
// first), so the argument of hierpipe.go's comment stands.
func (p *hierPipe) next() (int, error) {
	p.heads = p.heads[:0]
	p.headReqs = p.headReqs[:0]
	arrived, lowest := -1, false
	for s := range p.rdy.heaps {
		w, ok := p.rdy.first(s)
		if !ok {
			continue
		}
		pr := p.pending[w]
		if pr.req == nil { // a small first message, carried by the header: take it in order
			if w == p.done {
				return w, nil
			}
			continue
		}
		if transport.Completed(pr.req) {
			if arrived < 0 || w < arrived {
				arrived = w
			}
			continue
		}
		lowest = lowest || w == p.done
		p.heads = append(p.heads, w)
		p.headReqs = append(p.headReqs, pr.req)
	}
	if arrived >= 0 {
		return arrived, nil
	}
	if len(p.heads) <= 1 || !lowest {
		return p.done, nil
	}
	i, err := p.o.awaitAny(p.headReqs)
	if err != nil {
		return -1, p.o.fail(err)
	}
	return p.heads[i], nil
}

// finishRecv acts on receive w once it has arrived: reduces it, or copies
// it into place, from its chunk buffer, and frees that.
func (p *hierPipe) finishRecv(w int) error {
	r := p.recvs[w]
	sl := p.blockOf[w]
	if sl < 0 {
		return nil
	}
	_, _, seg := r.st.segs(r.i)
	lo, hi := r.st.g.span(seg, r.i%r.st.g.k)
	own := p.buf[lo:hi] // this rank's side of a reduction
	if r.st.reducesSrc(r.i) {
		own = p.src[lo:hi]
	}
	if r.st.kind == exchangeStep {
		if err := p.exchange(r.st, r.i, p.buf[lo:hi], own, p.bufOf[w]); err != nil {
			return err
		}
	} else if r.st.rsReceive(r.i) {
		p.spec.kernel(p.buf[lo:hi], own, p.bufOf[w])
	} else {
		if req, ok := r.st.hazard(r.i); ok {
			if req == nil {
				return p.o.fail(fmt.Errorf("internal error: receive %d due before the send that reads its memory", w))
			}
			if err := p.o.wait(req, r.st.right); err != nil {
				return err
			}
		}
		copy(p.buf[lo:hi], p.bufOf[w])
	}
	p.arena.free(sl)
	p.bufOf[w] = nil
	return nil
}

// exchange combines the peer's chunk i of a two-member exchange, theirs,
// with this rank's, own (mine, or the caller's send buffer when its send
// read that), into mine, once this rank's send of mine is done if it read
// mine: the lower rank's value first, so that both members compute the
// same bits.
func (p *hierPipe) exchange(s *hstage, i int, mine, own, theirs []byte) error {
	req := s.sends[i]
	if req == nil {
		return p.o.fail(fmt.Errorf("internal error: exchange receive %d due before its send", i))
	}
	if !s.sendsSrc(i) {
		if err := p.o.wait(req, s.right); err != nil {
			return err
		}
	}
	if p.o.c.rank < s.right {
		p.spec.kernel(mine, own, theirs)
	} else {
		p.spec.kernel(mine, theirs, own)
	}
	return nil
}

// pump posts every queued send whose receives have been waited for, in
// each peer's order, holding the lower levels' sends of class 1 until the
// start's sends of the top level are posted (hierStartPieces).
func (p *hierPipe) pump() {
	for again := true; again; {
		again = p.pumpOnce()
	}
}

// pumpOnce is one pass of pump over the peers; it reports whether the
// start ended during it (a peer passed over may have a held send to post).
func (p *hierPipe) pumpOnce() bool {
	started := p.startLeft == 0
	for _, peer := range p.peers {
		q := p.queues[peer]
		for p.qhead[peer] < len(q) && p.depsDone(q[p.qhead[peer]].deps) {
			e := q[p.qhead[peer]]
			if p.startLeft > 0 && e.st.held(e.i) {
				break
			}
			if e.st.opens(e.i) {
				p.startLeft--
			}
			c, seg, _ := e.st.segs(e.i)
			lo, hi := e.st.g.span(seg, c)
			from := p.buf
			if e.st.sendsSrc(e.i) {
				from = p.src
			}
			e.st.sends[e.i] = p.o.send(peer, from[lo:hi])
			p.qhead[peer]++
			if w := e.st.sendWaiter(e.i); w >= 0 {
				p.rdy.met(w)
			}
		}
	}
	return !started && p.startLeft == 0
}

// depsDone reports whether every receive of deps (wait positions) has
// been waited for.
func (p *hierPipe) depsDone(deps []int) bool {
	for _, d := range deps {
		if d >= p.done && !p.waited[d] {
			return false
		}
	}
	return true
}

// post posts receives in wait order up to position upTo, stopping at the
// first whose memory is not free, unless force: then it waits for it.
func (p *hierPipe) post(upTo int, force bool) error {
	for p.posted < min(upTo, len(p.recvs)) {
		r := p.recvs[p.posted]
		c, _, seg := r.st.segs(r.i)
		lo, hi := r.st.g.span(seg, c)
		var buf []byte
		p.blockOf[p.posted] = -1
		if r.st.slotReceive(r.i) {
			b, id, ok := p.arena.lend(hi - lo)
			if !ok {
				if force {
					return p.o.fail(fmt.Errorf("internal error: no chunk buffer for receive %d", p.posted))
				}
				return nil
			}
			p.blockOf[p.posted], p.bufOf[p.posted] = id, b
			buf = b
		} else {
			if req, ok := r.st.hazard(r.i); ok {
				if req == nil {
					if !force {
						return nil
					}
					return p.o.fail(fmt.Errorf("internal error: receive %d due before the send that reads its memory", p.posted))
				}
				if !force {
					select {
					case <-req.Done():
					default:
						return nil
					}
				} else if err := p.o.wait(req, r.st.right); err != nil {
					return err
				}
			}
			buf = p.buf[lo:hi]
		}
		p.pending[p.posted] = p.o.recv(r.st.left, buf)
		p.rdy.met(p.posted)
		p.posted++
	}
	return nil
}
