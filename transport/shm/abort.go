//go:build linux

package shm

import (
	"fmt"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// copyWait bounds how long Cancel, Abort and Close wait for a copy under
// way, which is one memory copy by a live process.
const copyWait = 30 * time.Second

// Abort implements transport.Endpoint: it ends op here and tells each rank
// in peers, which ends it too.
func (e *Endpoint) Abort(op transport.OpKey, peers []int, reason error) {
	if reason == nil {
		reason = fmt.Errorf("no reason given")
	}
	e.end(op, fmt.Errorf("shm: rank %d: operation aborted: %w", e.rank, reason))
	text := reason.Error()
	if len(text) > InlineMax {
		text = text[:InlineMax]
	}
	for _, p := range peers {
		if p < 0 || p >= e.size || p == e.rank || e.peers[p] == nil || e.peers[p].gone.Load() {
			continue
		}
		s := slot{kind: kindAbort, tag: transport.Tag{OpKey: op}, inline: []byte(text)}
		if err := e.peers[p].put(&s); err != nil {
			e.log.Debug("shm: abort not delivered", "rank", p, "err", err)
		}
	}
}

// End implements transport.Ender.
func (e *Endpoint) End(op transport.OpKey, err error) { e.end(op, err) }

// OnRemoteAbort implements transport.Ender.
func (e *Endpoint) OnRemoteAbort(f func(*transport.RemoteAbortError)) { e.onAbort.Set(f) }

// end fails this rank's requests of op with err and remembers op as ended,
// so later requests fail and its messages are dropped. A send whose copy
// has begun fails when the copy ends.
func (e *Endpoint) end(op transport.OpKey, err error) {
	e.mu.Lock()
	if e.closed || e.aborted[op] != nil {
		e.mu.Unlock()
		return
	}
	e.aborted[op] = err
	e.abortOrder = append(e.abortOrder, op)
	if len(e.abortOrder) > AbortMemory {
		delete(e.aborted, e.abortOrder[0])
		e.abortOrder = e.abortOrder[1:]
	}
	e.failLocked(func(k matchKey) bool { return k.op == op }, err, false)
	e.mu.Unlock()
	e.unstall() // dropped messages may have made room
}

// failLocked fails the queued receives and in-flight sends whose key
// satisfies match, and drops the matching unexpected messages (but for
// those carried in the ring when keepArrived: they are here, and stay
// receivable). The caller holds e.mu.
func (e *Endpoint) failLocked(match func(matchKey) bool, err error, keepArrived bool) {
	for k, q := range e.recvs {
		if match(k) {
			delete(e.recvs, k)
			for _, r := range q {
				r.complete(0, err)
			}
		}
	}
	for k, q := range e.unexpected {
		if !match(k) {
			continue
		}
		var kept []arrival
		for _, a := range q {
			switch {
			case a.rdv:
				e.drop(int(k.peer), a.s)
			case keepArrived:
				kept = append(kept, a)
			default:
				e.held--
				e.heldBytes -= len(a.inline)
			}
		}
		if len(kept) == 0 {
			delete(e.unexpected, k)
		} else {
			e.unexpected[k] = kept
		}
	}
	e.sends.each(func(r *request) {
		if match(r.key) && !e.cancelSend(r, err) && r.endErr == nil {
			r.endErr = err
		}
	})
}

// peerDown makes rank peer unreachable with err: its requests fail, and
// later ones fail at once. Sends it had claimed fail too, as a peer that is
// down copies nothing more; those it had copied complete.
func (e *Endpoint) peerDown(peer int, err error) {
	e.mu.Lock()
	if e.down[peer] != nil {
		e.mu.Unlock()
		return
	}
	e.down[peer] = err
	e.peers[peer].gone.Store(true)
	e.peers[peer].dropBacklog()
	e.sends.each(func(r *request) { // before failLocked, which would fail copied ones
		if int(r.key.peer) == peer {
			e.completeCopied(r, err)
		}
	})
	e.failLocked(func(k matchKey) bool { return int(k.peer) == peer }, err, true)
	closed := e.closed
	e.mu.Unlock()
	if !closed {
		e.log.Debug("shm: peer down", "rank", peer, "err", err)
	}
}

// awaitCopy waits, at most copyWait, for r to complete after its copy began.
func (e *Endpoint) awaitCopy(r *request) { e.awaitCopyUntil(r, time.Now().Add(copyWait)) }

// awaitCopyUntil waits for r to complete, at most until deadline.
func (e *Endpoint) awaitCopyUntil(r *request, deadline time.Time) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-r.Done():
	case <-t.C:
		e.log.Error("shm: a copy did not end", "rank", r.key.peer, "wait", copyWait)
	}
}

// Close implements transport.Endpoint. It fails pending requests with
// ErrClosed, waits for copies under way from or into this rank's buffers,
// tells the peers, and releases the segment, descriptors and goroutine.
func (e *Endpoint) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.reqFree = nil // released requests are not reused after Close
	e.failLocked(func(matchKey) bool { return true }, transport.ErrClosed, false)
	claimed := e.sends.all()
	e.mu.Unlock()
	deadline := time.Now().Add(copyWait) // one bound for all, not one each
	for _, r := range claimed {
		e.awaitCopyUntil(r, deadline)
	}
	e.copying.Wait()
	for _, p := range e.peers {
		if p != nil && p.rank != e.rank && !p.gone.Load() {
			_ = p.put(&slot{kind: kindBye})
		}
	}
	e.flushBacklogs()
	close(e.stop)
	ringDoorbell(e.bell.fd)
	<-e.stopped
	e.mu.Lock()
	e.sends.each(func(r *request) { // a copy that never ended: give up on it
		e.completeCopied(r, transport.ErrClosed)
	})
	e.mu.Unlock()
	e.mapMu.Lock()
	e.unmapped = true
	e.releasePeers()
	e.seg.unmap()
	e.mapMu.Unlock()
	_ = e.bell.close()
	closeFD(e.memfd)
	return nil
}

// flushBacklogs gives the peers' rings a moment to take what waits for
// them, so the BYE reaches them; it gives up after idleWait.
func (e *Endpoint) flushBacklogs() {
	deadline := time.Now().Add(idleWait)
	for e.backlogged.Load() > 0 && time.Now().Before(deadline) {
		for _, p := range e.peers {
			if p != nil && !p.gone.Load() {
				p.flush()
			}
		}
		time.Sleep(backlogWait)
	}
}
