package inproc

import (
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// Abort implements transport.Endpoint: it fails this rank's pending requests
// for op, drops op's messages that reach it later, and tells each rank in
// peers, whose receives from this rank for op then fail.
func (e *Endpoint) Abort(op transport.OpKey, peers []int, reason error) {
	text := "aborted"
	if reason != nil {
		text = reason.Error()
	}
	localErr := fmt.Errorf("inproc: rank %d: operation aborted: %w", e.rank, reasonOrDefault(reason))

	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.remember(abortKey{e.rank, op}, text)
	recvs := e.takeQueued(e.recvs, func(k matchKey) bool { return k.tag.OpKey == op })
	sends := e.takeQueued(e.sends, func(k matchKey) bool { return k.tag.OpKey == op })
	for _, r := range recvs {
		r.complete(0, localErr)
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
		s.withdraw(localErr)
	}
	for _, p := range peers {
		if p >= 0 && p < e.Size() && p != e.rank {
			e.world.eps[p].remoteAbort(e.rank, op, text)
		}
	}
}

func reasonOrDefault(err error) error {
	if err == nil {
		return fmt.Errorf("no reason given")
	}
	return err
}

// remoteAbort records at e that rank src aborted op, failing e's pending
// receives from src for it.
func (e *Endpoint) remoteAbort(src int, op transport.OpKey, text string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.remember(abortKey{src, op}, text)
	recvs := e.takeQueued(e.recvs, func(k matchKey) bool { return k.src == src && k.tag.OpKey == op })
	for _, r := range recvs {
		r.complete(0, &transport.RemoteAbortError{Rank: src, Op: op, Reason: text})
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

// remember records an aborted operation, forgetting the oldest beyond
// AbortMemory. The caller holds e.mu.
func (e *Endpoint) remember(k abortKey, text string) {
	if _, ok := e.aborted[k]; ok {
		return
	}
	e.aborted[k] = text
	e.abortOrder = append(e.abortOrder, k)
	if len(e.abortOrder) > AbortMemory {
		delete(e.aborted, e.abortOrder[0])
		e.abortOrder = e.abortOrder[1:]
	}
}

// hasAborted reports whether src aborted op, as known at e. The caller
// holds e.mu.
func (e *Endpoint) hasAborted(src int, op transport.OpKey) bool {
	_, ok := e.aborted[abortKey{src, op}]
	return ok
}

// abortError is the error of a new request for op involving peer, or nil if
// neither this rank nor peer aborted op. The caller holds e.mu.
func (e *Endpoint) abortError(peer int, op transport.OpKey) error {
	if text, ok := e.aborted[abortKey{e.rank, op}]; ok {
		return fmt.Errorf("inproc: rank %d: operation aborted: %s", e.rank, text)
	}
	if text, ok := e.aborted[abortKey{peer, op}]; ok {
		return &transport.RemoteAbortError{Rank: peer, Op: op, Reason: text}
	}
	return nil
}
