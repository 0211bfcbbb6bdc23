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
// have run (request.holds); the last one lets it go (letGo), completing
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
// or an eager send's copy) is buf, wait for the batches in progress that
// read buf, and reports whether any does. The caller holds mu.
func (e *engine) hold(r *request, buf []byte) bool {
	if len(buf) == 0 || (len(e.writing) == 0 && e.pending == nil) {
		return false
	}
	n := 0
	for _, b := range e.writing {
		if b.reads(buf) {
			b.holds = append(b.holds, r)
			n++
		}
	}
	// A batch polled in this critical section, not yet written.
	if b := e.pending; b != nil && b.gathered > 0 && b.reads(buf) {
		b.holds = append(b.holds, r)
		n++
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

// reads reports whether a datagram of b still to be written has a
// gathered payload in buf. A path whose datagrams are written (its
// writer goes on to the batch's next path, or waits for mu: an ACK of
// what it wrote came first, on loopback most of the time) reads nothing
// any more.
func (b *txBatch) reads(buf []byte) bool {
	for p, ms := range b.byPath {
		if len(ms) == 0 || b.written[p].Load() {
			continue
		}
		for i := range ms {
			if overlaps(ms[i].gather[0], buf) {
				return true
			}
		}
	}
	return false
}

// overlaps reports whether a and b share some byte of memory.
func overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

// letGo runs when b's write is over, or b is dropped unwritten: the ends
// that waited for it and for no other batch happen now, and Cancels
// waiting on them wake. The caller holds mu.
func (e *engine) letGo(b *txBatch) {
	if b.gathered == 0 {
		return
	}
	b.gathered = 0
	for i := range b.written {
		b.written[i].Store(false)
	}
	if i := slices.Index(e.writing, b); i >= 0 {
		e.writing = slices.Delete(e.writing, i, i+1)
	}
	if len(b.holds) == 0 {
		return
	}
	for i, r := range b.holds {
		b.holds[i] = nil
		r.holds--
		if r.holds == 0 {
			r.end()
		}
	}
	b.holds = b.holds[:0]
	if e.holdWaiters > 0 {
		e.wrote.Broadcast()
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
