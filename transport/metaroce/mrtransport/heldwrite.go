package mrtransport

import (
	"slices"
	"unsafe"
)

// Writes that read a send's buffer. A DATA datagram whose payload is
// gathered (engine.gatherMin: full pieces at MTU 9000, large payloads on
// loopback) leaves the payload in the message being sent, and the socket
// reads it there when the batch is written: outside the engine's lock,
// after the core has let the message go. Meanwhile another goroutine may
// end the send: a Cancel, a failure (End, Abort, a peer gone, Close), or
// its completion (a piece whose first datagram waits in a batch, its
// writer not scheduled for longer than the RTO, resent on another path
// and acknowledged there). The caller may then reuse the buffer, so the
// end waits: a send whose buffer a batch being written reads is done
// for the engine (stateDone) but not for its caller until those writes
// have run (request.holds counts the batches' paths it waits for); the
// writer of the last one lets it go as soon as that path's datagrams are
// written (letGoPath), or when it recycles the batch (letGo), completing
// it for its caller (or, for an eager send, giving its copy back to the
// pool). Cancel waits for that too (engine.awaitWrites).
//
// Only batches with gathered datagrams are tracked (engine.writing), and
// only when a send ends with some of them in progress is a batch's
// datagrams compared with its buffer: nothing is added to the path of a
// datagram but a count (and a flag per path written), and nothing is
// allocated once the slices have grown. The comparison is by path: a
// datagram of a path whose socket write is under way counts as unwritten
// although that write may have sent it already (the held end then waits
// for the rest of that write). Two ranks at 4 paths on loopback (load
// ~19, about 7,600 sends at MTU 9000 and 4,800 at the default datagram)
// held 162 and 47 ends, all but one while the datagram's own path was
// being written; one waited for its path's turn: a send acknowledged
// with a datagram of its own not written yet, and no Cancel.

// hold makes the end of r, a send whose buffer (the core's: the caller's,
// or an eager send's copy) is buf, wait for the paths of the batches in
// progress whose datagrams still to be written read buf, and reports
// whether any does. The caller holds mu.
func (e *engine) hold(r *request, buf []byte) bool {
	if len(buf) == 0 || (len(e.writing) == 0 && e.pending == nil) {
		return false
	}
	n := 0
	for _, b := range e.writing {
		n += b.hold(r, buf)
	}
	// A batch polled in this critical section, not yet written.
	if b := e.pending; b != nil && b.gathered > 0 {
		n += b.hold(r, buf)
	}
	if n == 0 {
		return false
	}
	r.holds += n
	e.st.heldEnds.Add(1)
	if e.onHold != nil {
		e.onHold()
	}
	return true
}

// heldOn is a send whose end waits for the datagrams of one path of a
// batch to be written.
type heldOn struct {
	r    *request
	path int
}

// hold makes r's end wait for each path of b whose datagrams still to be
// written have a gathered payload in buf, and returns how many. A path
// whose datagrams are written (its writer goes on to the batch's next
// path, or waits for mu: an ACK of what it wrote came first, on loopback
// most of the time) reads nothing any more. The caller holds mu.
func (b *txBatch) hold(r *request, buf []byte) int {
	n := 0
	for p, ms := range b.byPath {
		if len(ms) == 0 || b.written[p].Load() {
			continue
		}
		for i := range ms {
			if overlaps(ms[i].gather[0], buf) {
				b.holds = append(b.holds, heldOn{r, p})
				b.held[p].Store(true)
				n++
				break
			}
		}
	}
	return n
}

// overlaps reports whether a and b share some byte of memory.
func overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// wrotePath runs in write, without mu, once b's datagrams on path are
// written: it marks the path written and lets go at once the ends that
// waited for it (b.held[path]; an end held after the check waits for
// letGo instead). The caller does not hold mu.
func (e *engine) wrotePath(b *txBatch, path int) {
	if b.gathered == 0 {
		return // not read by hold: no need to write it
	}
	b.written[path].Store(true)
	if !b.held[path].Load() {
		return
	}
	e.mu.Lock()
	e.letGoPath(b, path)
	e.mu.Unlock()
}

// letGoPath lets go the ends that waited for b's datagrams on path: those
// that waited for nothing else happen now, and Cancels waiting on them
// wake. The caller holds mu.
func (e *engine) letGoPath(b *txBatch, path int) {
	b.held[path].Store(false)
	k, ended := 0, false
	for _, h := range b.holds {
		if h.path != path {
			b.holds[k] = h
			k++
			continue
		}
		ended = true
		unhold(h.r)
	}
	clear(b.holds[k:])
	b.holds = b.holds[:k]
	if ended && e.holdWaiters > 0 {
		e.wrote.Broadcast()
	}
}

// letGo runs when b's write is over, or b is dropped unwritten: the ends
// that still waited for it and for no other batch happen now, and
// Cancels waiting on them wake. The caller holds mu.
func (e *engine) letGo(b *txBatch) {
	if b.gathered == 0 {
		return
	}
	b.gathered = 0
	for i := range b.written {
		b.written[i].Store(false)
		b.held[i].Store(false)
	}
	if i := slices.Index(e.writing, b); i >= 0 {
		e.writing = slices.Delete(e.writing, i, i+1)
	}
	if len(b.holds) == 0 {
		return
	}
	for i, h := range b.holds {
		b.holds[i] = heldOn{}
		unhold(h.r)
	}
	b.holds = b.holds[:0]
	if e.holdWaiters > 0 {
		e.wrote.Broadcast()
	}
}

// unhold lets go one hold of r's end: the last ends it. The caller holds
// mu.
func unhold(r *request) {
	r.holds--
	if r.holds == 0 {
		r.end()
	}
}

// awaitWrites waits until no batch being written reads r's buffer, which
// takes as long as the sockets' writes in progress (non-blocking sends,
// or a wait for room in a socket's send buffer). The caller does not
// hold mu.
func (e *engine) awaitWrites(r *request) {
	e.lock()
	e.holdWaiters++
	for r.holds > 0 {
		e.wrote.Wait()
	}
	e.holdWaiters--
	e.mu.Unlock()
}
