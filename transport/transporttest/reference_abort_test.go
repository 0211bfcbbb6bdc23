package transporttest

import (
	"errors"
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// refEndKey names an operation ended on one rank.
type refEndKey struct {
	rank int
	op   transport.OpKey
}

// refEnd records why an operation ended on a rank: the error of its
// requests, and the rank whose abort ended it (-1 for the rank's own).
type refEnd struct {
	err  error
	from int
}

// Abort mutations, each breaking one promise of Abort:
//
//	plainabort  a told peer's error is not a *transport.RemoteAbortError
//	recvonly    a told peer ends only its receives from the aborting rank
//	            (the contract before aborts ended the whole operation)
//	keepsends   a told peer's pending sends of the operation stay pending
//	lastabort   a later abort replaces the error of an ended operation

func (e *refEndpoint) Abort(op transport.OpKey, peers []int, reason error) {
	if reason == nil {
		reason = errors.New("aborted")
	}
	w := e.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed[e.rank] {
		return
	}
	w.end(e.rank, op, refEnd{err: fmt.Errorf("aborted: %w", reason), from: -1})
	for _, p := range peers {
		if p >= 0 && p < w.size && p != e.rank && !w.closed[p] {
			w.end(p, op, refEnd{err: w.remoteAbort(e.rank, op, reason.Error()), from: e.rank})
		}
	}
}

func (w *refWorld) remoteAbort(rank int, op transport.OpKey, reason string) error {
	if w.mutation == "plainabort" {
		return errors.New(reason)
	}
	return &transport.RemoteAbortError{Rank: rank, Op: op, Reason: reason}
}

// endedErr is the error of a request of rank with peer for op, or nil if
// op has not ended there; w.mu is held.
func (w *refWorld) endedErr(rank, peer int, op transport.OpKey, isSend bool) error {
	end, ok := w.ended[refEndKey{rank, op}]
	if !ok {
		return nil
	}
	if end.from >= 0 && w.mutation == "recvonly" && (isSend || peer != end.from) {
		return nil
	}
	return end.err
}

// end ends op on rank: its pending requests of op fail, and messages of op
// waiting for it are dropped (their pending sends complete, as on a network
// where the receiver discards them); w.mu is held.
func (w *refWorld) end(rank int, op transport.OpKey, why refEnd) {
	k := refEndKey{rank, op}
	if _, ok := w.ended[k]; ok && w.mutation != "lastabort" {
		return
	}
	w.ended[k] = why
	for key, recvs := range w.posted {
		if key.dst != rank || key.tag.OpKey != op || w.endedErr(rank, key.src, op, false) == nil {
			continue
		}
		for _, r := range recvs {
			r.finish(0, why.err)
		}
		delete(w.posted, key)
	}
	for key, msgs := range w.queues {
		if key.tag.OpKey != op {
			continue
		}
		if key.dst == rank && w.endedErr(rank, key.src, op, false) != nil {
			for _, m := range msgs {
				if m.send != nil {
					m.send.finish(len(m.send.buf), nil)
				}
			}
			delete(w.queues, key)
			continue
		}
		if key.src == rank && w.failsPendingSend(rank, key.dst, op) {
			w.failPendingSends(key, why.err)
		}
	}
}

// failsPendingSend reports whether ending op on rank fails its pending
// sends to peer; w.mu is held.
func (w *refWorld) failsPendingSend(rank, peer int, op transport.OpKey) bool {
	end := w.ended[refEndKey{rank, op}]
	if end.from >= 0 && w.mutation == "keepsends" {
		return false
	}
	return w.endedErr(rank, peer, op, true) != nil
}

// failPendingSends fails the pending sends queued under key with err,
// keeping the copies of small messages already sent; w.mu is held.
func (w *refWorld) failPendingSends(key refKey, err error) {
	kept := w.queues[key][:0:0]
	for _, m := range w.queues[key] {
		if m.send == nil {
			kept = append(kept, m)
		} else {
			m.send.finish(0, err)
		}
	}
	w.queues[key] = kept
}
