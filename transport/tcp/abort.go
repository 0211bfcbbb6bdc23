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

// opEndedLocked reports whether op has ended on this rank, by its own
// abort or a peer's: its messages are dropped and new requests refused.
func (e *Endpoint) opEndedLocked(op transport.OpKey) bool {
	_, ok := e.ended.get(op)
	return ok
}

// Abort implements transport.Endpoint. It ends op on this rank with an
// error wrapping reason (see endOpLocked) and queues an abort frame to each
// rank in peers, which ends op there in the same way. If op has already
// ended here, its first error stays, and the peers are told all the same.
// Ended operations are remembered among the last Config.AbortHistoryMax.
func (e *Endpoint) Abort(op transport.OpKey, peers []int, reason error) {
	if reason == nil {
		reason = errors.New("aborted")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.endOpLocked(op, e.abortError(op, reason))
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

// onAbort handles a peer's abort frame: the operation ends on this rank
// too, and its requests, with every rank, fail with a
// *transport.RemoteAbortError naming the peer, now and later. An operation
// that has already ended here keeps its first error.
func (c *conn) onAbort(h header) error {
	reason := make([]byte, h.body)
	if err := c.readBody(reason); err != nil {
		return err
	}
	e, op := c.ep, h.tag.OpKey
	err := &transport.RemoteAbortError{Rank: c.peer.rank, Op: op, Reason: string(reason)}
	e.mu.Lock()
	closed := e.closed
	if !closed {
		e.endOpLocked(op, err)
	}
	e.mu.Unlock()
	if !closed {
		e.onAbort.Call(err)
	}
	return nil
}

// End implements transport.Ender.
func (e *Endpoint) End(op transport.OpKey, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.closed {
		e.endOpLocked(op, err)
	}
}

// OnRemoteAbort implements transport.Ender.
func (e *Endpoint) OnRemoteAbort(f func(*transport.RemoteAbortError)) { e.onAbort.Set(f) }

// endOpLocked ends op on this rank, unless it has already ended: err
// becomes the error of its requests; every pending request of op fails
// with err, sends and receives alike and with every peer (so that a send
// to a rank that will never receive it does not wait); later requests of
// op are refused with err; and op's queued messages are dropped.
func (e *Endpoint) endOpLocked(op transport.OpKey, err error) {
	if e.opEndedLocked(op) {
		return
	}
	e.ended.add(op, err)
	e.failPendingLocked(func(r *request) bool { return r.tag.OpKey == op }, err)
	for _, p := range e.peers {
		e.dropOpLocked(p, op)
	}
}

// dropOpLocked removes p's queued state for op, which has ended on this
// rank: posted receives (already failed), waiting messages (rendezvous
// requests are refused so that p's sends end), and rendezvous transfers in
// both directions (their requests already failed; chunks that still
// arrive are discarded).
func (e *Endpoint) dropOpLocked(p *peer, op transport.OpKey) {
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
			case u.rts && p.failed == nil:
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
	for id, r := range p.rdvSend {
		if r.tag.OpKey == op {
			delete(p.rdvSend, id)
		}
	}
}
