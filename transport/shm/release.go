//go:build linux

package shm

// heldBufBytes is the size of the buffers that hold unexpected inline
// messages (any up to EagerMax: collective's header messages carry up to
// 4 KiB of data); heldFreeMax of them are kept for reuse (1 MiB), so that a
// steady stream of small messages that arrive before their receive
// allocates nothing for them.
const (
	heldBufBytes = EagerMax
	heldFreeMax  = 256
)

// holdCopy returns a copy of msg for the unexpected queue. The caller holds
// e.mu.
func (e *Endpoint) holdCopy(msg []byte) []byte {
	if n := len(e.heldFree); len(msg) <= heldBufBytes && n > 0 {
		b := e.heldFree[n-1]
		e.heldFree[n-1] = nil
		e.heldFree = e.heldFree[:n-1]
		return append(b, msg...)
	}
	if len(msg) <= heldBufBytes {
		return append(make([]byte, 0, heldBufBytes), msg...)
	}
	return append([]byte(nil), msg...)
}

// releaseHeld gives back a buffer of holdCopy once its message was
// delivered. The caller holds e.mu.
func (e *Endpoint) releaseHeld(b []byte) {
	if cap(b) == heldBufBytes && len(e.heldFree) < heldFreeMax {
		e.heldFree = append(e.heldFree, b[:0])
	}
}

// releaseSend returns the send word of r to the free list with a new
// generation. The caller holds e.mu.
func (e *Endpoint) releaseSend(r *request) {
	if !e.sends.has(r) {
		return
	}
	e.seg.sendWord(r.index).Store(sendWordValue((r.gen+1)&0xffffffff, sendFree))
	e.sends.drop(r)
}

// withdraw fails r with err if it has not completed. For a send whose copy
// has begun, and for a receive being filled, it waits for the copy to end:
// afterwards the transport does not touch r's buffer.
func (e *Endpoint) withdraw(r *request, err error) {
	e.mu.Lock()
	if r.state.Load() == stateDone {
		e.mu.Unlock()
		return
	}
	if !r.isSend {
		if r.state.Load() == statePending && e.removeRecv(r) {
			r.complete(0, err)
			e.mu.Unlock()
			return
		}
		e.mu.Unlock()
		e.awaitCopy(r)
		return
	}
	if e.cancelSend(r, err) {
		e.mu.Unlock()
		return
	}
	if r.endErr == nil {
		r.endErr = err
	}
	e.mu.Unlock()
	e.awaitCopy(r)
}

// cancelSend withdraws the rendezvous send r if its receiver has not
// claimed it, completing it with err. The caller holds e.mu.
func (e *Endpoint) cancelSend(r *request, err error) bool {
	if !e.sends.has(r) {
		return false
	}
	w := e.seg.sendWord(r.index)
	if !w.CompareAndSwap(sendWordValue(r.gen, sendPosted), sendWordValue(r.gen, sendCancelled)) {
		return false
	}
	e.releaseSend(r)
	r.complete(0, err)
	return true
}

// removeRecv takes the queued receive r out of e.recvs, in place: a queue
// it empties goes back to e.recvsFree, as popFront's do, so that a receive
// withdrawn in steady state (an eager root's) allocates no queue for the
// next one. The caller holds e.mu.
func (e *Endpoint) removeRecv(r *request) bool {
	q := e.recvs[r.key]
	for i, x := range q {
		if x == r {
			copy(q[i:], q[i+1:])
			q[len(q)-1] = nil
			q = q[:len(q)-1]
			if len(q) == 0 {
				delete(e.recvs, r.key)
				e.recvsFree.put(q)
			} else {
				e.recvs[r.key] = q
			}
			return true
		}
	}
	return false
}
