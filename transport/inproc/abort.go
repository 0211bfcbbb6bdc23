package inproc

import (
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// Abort implements transport.Endpoint: it ends op on this rank and on each
// rank in peers. On every one of them, pending requests for op fail, later
// requests for op fail at once, and op's messages that arrive are dropped.
func (e *Endpoint) Abort(op transport.OpKey, peers []int, reason error) {
	if reason == nil {
		reason = fmt.Errorf("no reason given")
	}
	e.end(op, fmt.Errorf("inproc: rank %d: operation aborted: %w", e.rank, reason))
	remote := &transport.RemoteAbortError{Rank: e.rank, Op: op, Reason: reason.Error()}
	for _, p := range peers {
		if p >= 0 && p < e.Size() && p != e.rank {
			dst := e.world.eps[p]
			dst.end(op, remote)
			dst.onAbort.Call(remote)
		}
	}
}

// End implements transport.Ender.
func (e *Endpoint) End(op transport.OpKey, err error) { e.end(op, err) }

// OnRemoteAbort implements transport.Ender.
func (e *Endpoint) OnRemoteAbort(f func(*transport.RemoteAbortError)) { e.onAbort.Set(f) }

// end fails every request of this rank for op with err, remembers op as
// ended (so later requests fail with err and its messages are dropped), and
// waits until no transfer for op touches this rank's buffers.
func (e *Endpoint) end(op transport.OpKey, err error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	if _, ok := e.aborted[op]; ok {
		e.mu.Unlock()
		return
	}
	e.remember(op, err)
	match := func(k matchKey) bool { return k.tag.OpKey == op }
	recvs := e.takeQueued(e.recvs, match)
	sends := e.takeQueued(e.sends, match)
	for _, r := range recvs {
		r.complete(0, err)
	}
	for _, s := range sends {
		s.complete(len(s.buf), nil) // dropped, as a network peer would
	}
	var mine []*request
	for s := range e.mine {
		if s.key.tag.OpKey == op {
			mine = append(mine, s)
		}
	}
	e.mu.Unlock()

	for _, s := range sends {
		s.owner.unregister(s)
	}
	for _, s := range mine {
		s.withdraw(err)
	}
}

// takeQueued removes and returns the pending requests of m whose key
// satisfies match. The caller holds e.mu.
func (e *Endpoint) takeQueued(m map[matchKey][]*request, match func(matchKey) bool) []*request {
	var out []*request
	for k, q := range m {
		if match(k) {
			out = append(out, q...)
			delete(m, k)
		}
	}
	return out
}

// remember records an ended operation, forgetting the oldest beyond
// AbortMemory. The caller holds e.mu.
func (e *Endpoint) remember(op transport.OpKey, err error) {
	e.aborted[op] = err
	e.abortOrder = append(e.abortOrder, op)
	if len(e.abortOrder) > AbortMemory {
		delete(e.aborted, e.abortOrder[0])
		e.abortOrder = e.abortOrder[1:]
	}
}

// abortError is the error of a new request for op, or nil if op has not
// ended here. The caller holds e.mu.
func (e *Endpoint) abortError(op transport.OpKey) error {
	return e.aborted[op]
}
