package mrtransport

import (
	"errors"
	"fmt"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
)

// Abort implements transport.Endpoint: it ends op on this rank and sends
// each rank in peers a control message with op and reason's text (cut to
// MaxReasonBytes), on which that rank ends op the same way. It does not
// wait for the peers.
func (e *Endpoint) Abort(op transport.OpKey, peers []int, reason error) {
	if reason == nil {
		reason = errors.New("no reason given")
	}
	e.eng.lockAPI()
	defer e.eng.unlock()
	if e.closed {
		return
	}
	now := e.eng.now()
	e.end(now, op, fmt.Errorf("mrtransport: rank %d: operation aborted: %w", e.cfg.Rank, reason))
	msg := appendAbort(nil, op, reason.Error())
	told := make(map[int]bool, len(peers))
	for _, r := range peers {
		if r < 0 || r >= len(e.peers) || e.peers[r] == nil || told[r] {
			continue
		}
		told[r] = true
		e.sendCtrl(now, e.peers[r], msg)
	}
	e.eng.process(now)
}

// End implements transport.Ender.
func (e *Endpoint) End(op transport.OpKey, err error) {
	e.eng.lockAPI()
	defer e.eng.unlock()
	if e.closed {
		return
	}
	now := e.eng.now()
	e.end(now, op, err)
	e.eng.process(now)
}

// OnRemoteAbort implements transport.Ender. f is called with the engine
// lock held.
func (e *Endpoint) OnRemoteAbort(f func(*transport.RemoteAbortError)) { e.onAbort.Set(f) }

// end ends op on this rank: its requests fail with err (in the core they
// are cancelled first), later ones are refused, and its messages that the
// core holds or that arrive later are discarded. An operation that has
// already ended keeps its first error. Once Close has begun, only the
// sends it lets drain are left (a remote abort during the linger): those
// of op fail with transport.ErrClosed and err, and nothing is recorded.
// The caller holds eng.mu.
func (e *Endpoint) end(now time.Duration, op transport.OpKey, err error) {
	if e.ended.get(op) != nil {
		return
	}
	if e.closed {
		if e.draining {
			for _, p := range e.peers {
				if p != nil {
					e.withdrawOp(now, p, op, fmt.Errorf("%w (%w)", transport.ErrClosed, err))
				}
			}
		}
		return
	}
	e.ended.add(op, err)
	low := lowOf(op)
	for _, p := range e.peers {
		if p == nil {
			continue
		}
		e.withdrawOp(now, p, op, err)
		var held []msgKey
		for k, n := range p.unexpected {
			if k.opOf() == low {
				for range n {
					held = append(held, k)
				}
			}
		}
		for _, k := range held {
			e.sink(now, p, k)
		}
	}
	e.self.fail(func(r *request) bool { return r.tag.OpKey == op }, err)
}

// withdrawOp fails with err the requests of op with p. Each queue is
// withdrawn from its tail, so that no request behind a withdrawn head is
// handed to the core on the way (where a send could go eager and complete
// for its caller before its turn to be withdrawn). The caller holds
// eng.mu.
func (e *Endpoint) withdrawOp(now time.Duration, p *peer, op transport.OpKey, err error) {
	low := lowOf(op)
	var mine []*request
	for _, qs := range []map[msgKey]*queue{p.sends, p.recvs} {
		for k, q := range qs {
			if k.opOf() != low {
				continue
			}
			for i := len(q.reqs) - 1; i >= 0; i-- {
				if r := q.reqs[i]; r.tag.OpKey == op {
					mine = append(mine, r)
				}
			}
		}
	}
	for _, r := range mine {
		e.withdraw(now, p, r, err)
	}
}

// sink posts a receive that discards one message with key k, which belongs
// to an ended operation. The caller holds eng.mu.
func (e *Endpoint) sink(now time.Duration, p *peer, k msgKey) {
	r := &request{ep: e, peer: p.rank, key: k, sink: true}
	e.enqueue(now, p, r)
}

// unexpectedArrived notes a message the core holds because no receive was
// posted for it; one of an ended operation is discarded at once.
func (e *Endpoint) unexpectedArrived(now time.Duration, p *peer, k msgKey) {
	if k.isCtrl() {
		return
	}
	if e.ended.hasLow(k.opOf()) {
		e.sink(now, p, k)
		return
	}
	p.unexpected[k]++
}

// matchedUnexpected notes that a receive with key k was posted, which
// takes the oldest message the core holds with that key, if any.
func (p *peer) matchedUnexpected(k msgKey) {
	if n := p.unexpected[k]; n > 1 {
		p.unexpected[k] = n - 1
	} else if n == 1 {
		delete(p.unexpected, k)
	}
}

// sendCtrl sends one control message to p. The caller holds eng.mu.
func (e *Endpoint) sendCtrl(now time.Duration, p *peer, msg []byte) {
	if !p.up {
		return
	}
	k := ctrlKey(p.ctrlOut)
	p.ctrlOut++
	buf := append([]byte(nil), msg...)
	if err := e.eng.core.Send(now, p.conn, k.stream, k.msg, buf); err != nil {
		e.counters.ctrlDropped++
		e.log.Warn("mrtransport: control message not sent", "peer", p.rank, "err", err)
		return
	}
	p.ctrlSends[k] = buf
}

// postCtrlRecv posts the receive of p's next control message. The caller
// holds eng.mu.
func (e *Endpoint) postCtrlRecv(now time.Duration, p *peer) {
	if p.ctrlBuf == nil {
		p.ctrlBuf = make([]byte, ctrlMaxLen)
	}
	k := ctrlKey(p.ctrlIn)
	if err := e.eng.core.PostRecv(now, p.conn, k.stream, k.msg, p.ctrlBuf); err != nil {
		e.log.Warn("mrtransport: control receive not posted", "peer", p.rank, "err", err)
	}
}

// ctrlDone acts on a control message from p and posts the receive of the
// next one.
func (e *Endpoint) ctrlDone(now time.Duration, p *peer, ev metaroce.Event) {
	if ev.Err != nil && !errors.Is(ev.Err, metaroce.ErrTruncated) {
		return // the connection is going away
	}
	p.ctrlIn++
	if ev.Err == nil && isMove(p.ctrlBuf[:ev.N]) {
		e.peerMoved(p, p.ctrlBuf[:ev.N])
	} else if ev.Err == nil {
		op, reason, err := parseAbort(p.ctrlBuf[:ev.N])
		if err == nil {
			rerr := &transport.RemoteAbortError{Rank: p.rank, Op: op, Reason: reason}
			e.end(now, op, rerr)
			if !e.closed {
				e.onAbort.Call(rerr)
			}
		} else {
			e.counters.badControl++
			e.log.Warn("mrtransport: bad control message", "peer", p.rank, "err", err)
		}
	} else {
		e.counters.badControl++
	}
	e.postCtrlRecv(now, p)
}

// endedOps remembers the operations that ended on this rank, with their
// errors, up to a limit (oldest forgotten first).
type endedOps struct {
	limit int
	errs  map[transport.OpKey]error
	order []transport.OpKey
	lows  map[opLow]int // ended operations by key-visible identity
}

func newEndedOps(limit int) endedOps {
	return endedOps{limit: limit, errs: make(map[transport.OpKey]error), lows: make(map[opLow]int)}
}

func (o *endedOps) get(op transport.OpKey) error { return o.errs[op] }

func (o *endedOps) hasLow(l opLow) bool { return o.lows[l] > 0 }

func (o *endedOps) add(op transport.OpKey, err error) {
	o.errs[op] = err
	o.order = append(o.order, op)
	o.lows[lowOf(op)]++
	if len(o.order) > o.limit {
		old := o.order[0]
		o.order = o.order[1:]
		delete(o.errs, old)
		if l := lowOf(old); o.lows[l] > 1 {
			o.lows[l]--
		} else {
			delete(o.lows, l)
		}
	}
}
