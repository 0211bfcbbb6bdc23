package tcp

import (
	"errors"
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// abortLog remembers up to max aborted operations with a value each,
// forgetting the oldest first.
type abortLog[V any] struct {
	max   int
	order []transport.OpKey
	byOp  map[transport.OpKey]V
}

func newAbortLog[V any](max int) abortLog[V] {
	return abortLog[V]{max: max, byOp: map[transport.OpKey]V{}}
}

func (l *abortLog[V]) add(op transport.OpKey, v V) {
	if _, ok := l.byOp[op]; ok {
		return
	}
	if len(l.order) >= l.max {
		delete(l.byOp, l.order[0])
		l.order = l.order[1:]
	}
	l.order = append(l.order, op)
	l.byOp[op] = v
}

func (l *abortLog[V]) get(op transport.OpKey) (V, bool) {
	v, ok := l.byOp[op]
	return v, ok
}

// abortError is the error of this rank's requests of an operation it
// aborted; it wraps the reason.
func (e *Endpoint) abortError(op transport.OpKey, reason error) error {
	return fmt.Errorf("rank %d aborted operation comm=%#x op=%d: %w", e.rank, op.Comm, op.Op, reason)
}

// droppedLocked reports whether messages from p for op are to be dropped:
// this rank or p aborted op.
func (e *Endpoint) droppedLocked(p *peer, op transport.OpKey) bool {
	if _, ok := e.aborts.get(op); ok {
		return true
	}
	_, ok := p.aborts.get(op)
	return ok
}

// Abort implements transport.Endpoint. It fails this rank's pending
// requests of op, drops op's waiting and later messages (answering pending
// rendezvous requests with a refusal so their senders do not wait), and
// queues an abort frame to each rank in peers. The operation is remembered
// among the last Config.AbortHistoryMax aborts.
func (e *Endpoint) Abort(op transport.OpKey, peers []int, reason error) {
	if reason == nil {
		reason = errors.New("aborted")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.aborts.add(op, reason)
	err := e.abortError(op, reason)
	e.failPendingLocked(func(r *request) bool { return r.tag.OpKey == op }, err)
	for _, p := range e.peers {
		e.dropOpLocked(p, op, true)
	}
	text := reason.Error()
	if len(text) > MaxReasonBytes {
		text = text[:MaxReasonBytes]
	}
	for _, rank := range peers {
		if rank < 0 || rank >= e.size || rank == e.rank || e.peers[rank].failed != nil {
			continue
		}
		e.peers[rank].conns[0].enqueue(outFrame{
			h:    header{kind: kindAbort, tag: transport.Tag{OpKey: op}, body: uint32(len(text))},
			body: []byte(text),
		})
	}
}

// onAbort handles a peer's abort of an operation: our receives from it for
// that operation fail with a *transport.RemoteAbortError, now and later.
func (c *conn) onAbort(h header) error {
	reason := make([]byte, h.body)
	if err := c.readBody(reason); err != nil {
		return err
	}
	e, p, op := c.ep, c.peer, h.tag.OpKey
	e.mu.Lock()
	defer e.mu.Unlock()
	p.aborts.add(op, string(reason))
	err := &transport.RemoteAbortError{Rank: p.rank, Op: op, Reason: string(reason)}
	e.failPendingLocked(func(r *request) bool { return !r.isSend && r.peer == p.rank && r.tag.OpKey == op }, err)
	e.dropOpLocked(p, op, false)
	return nil
}

// dropOpLocked removes p's queued state for op: posted receives (already
// failed), waiting messages, and rendezvous transfers. If local, this rank
// aborted op: its sends are dropped too, and waiting rendezvous requests
// are refused so that p's sends end.
func (e *Endpoint) dropOpLocked(p *peer, op transport.OpKey, local bool) {
	for tag := range p.posted {
		if tag.OpKey == op {
			delete(p.posted, tag)
		}
	}
	for tag, list := range p.unexpected {
		if tag.OpKey != op {
			continue
		}
		for _, u := range list {
			p.unexpCount--
			switch {
			case u.rts && local && p.failed == nil:
				p.conns[0].enqueue(outFrame{h: header{kind: kindCTS, flags: ctsAborted, tag: tag, msgID: u.msgID}})
			case !u.rts && u.send == nil:
				e.consumeEagerLocked(p, u)
			}
		}
		delete(p.unexpected, tag)
	}
	for id, d := range p.rdvRecv {
		if d.req.tag.OpKey == op {
			delete(p.rdvRecv, id)
		}
	}
	if local {
		for id, r := range p.rdvSend {
			if r.tag.OpKey == op {
				delete(p.rdvSend, id)
			}
		}
	}
}
