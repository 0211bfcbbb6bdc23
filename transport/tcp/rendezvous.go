package tcp

import (
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// Rendezvous. A message larger than Config.EagerLimit (or beyond the
// receiver's credit) is announced by an RTS frame carrying its length. The
// receiver answers with a CTS once a receive matches it; only then does the
// sender send the data, in chunks of Config.ChunkBytes that alternate over
// the peer's connections, and the receiver's readers read each chunk
// straight into the receive buffer at its offset.

// onCTS handles the receiver's answer to one of our RTS frames.
func (c *conn) onCTS(h header) {
	e, p := c.ep, c.peer
	e.mu.Lock()
	defer e.mu.Unlock()
	r := p.rdvSend[h.msgID]
	delete(p.rdvSend, h.msgID)
	if r == nil || r.isDone() {
		if h.flags == ctsOK {
			// The send was cancelled or aborted after its RTS left: end the
			// receive that is waiting for the data.
			c.enqueue(outFrame{h: header{kind: kindRData, flags: rdataWithdrawn, tag: h.tag, msgID: h.msgID}})
		}
		return
	}
	switch h.flags {
	case ctsTruncated:
		r.complete(0, fmt.Errorf("rank %d's receive buffer is shorter than the message: %w", p.rank, transport.ErrTruncated))
	case ctsAborted:
		r.complete(0, refusedByAbort(p, r.tag.OpKey))
	default:
		e.scheduleChunksLocked(p, r)
	}
}

// refusedByAbort is the error of a rendezvous send that p refused because
// op has ended there (by p's own abort or one p was told of; the frame
// does not say which, so the error names p).
func refusedByAbort(p *peer, op transport.OpKey) error {
	return &transport.RemoteAbortError{Rank: p.rank, Op: op, Reason: "the receiver ended the operation"}
}

// scheduleChunksLocked queues the data of rendezvous send r: chunk k goes
// on connection k mod ConnsPerPeer.
func (e *Endpoint) scheduleChunksLocked(p *peer, r *request) {
	size, chunk := len(r.buf), e.cfg.ChunkBytes
	r.expect(size)
	if size == 0 {
		r.complete(0, nil)
		return
	}
	stride := chunk * len(p.conns)
	for i, c := range p.conns {
		if first := i * chunk; first < size {
			c.enqueueBulk(&bulkJob{req: r, msgID: r.msgID, tag: r.tag, next: first, stride: stride, chunk: chunk})
		}
	}
}

// onRData reads one chunk of a rendezvous message into the matched
// receive's buffer, or discards it if that receive is gone.
func (c *conn) onRData(h header) error {
	e, p, n := c.ep, c.peer, int(h.body)
	e.mu.Lock()
	d := p.rdvRecv[h.msgID]
	if d == nil {
		e.mu.Unlock()
		return c.discard(n)
	}
	if h.flags == rdataWithdrawn {
		delete(p.rdvRecv, h.msgID)
		d.req.fail(fmt.Errorf("rank %d: %w", p.rank, ErrWithdrawn))
		e.mu.Unlock()
		return nil
	}
	off := int(h.arg)
	if off+n > d.size || d.received+n > d.size {
		e.mu.Unlock()
		return fmt.Errorf("%w: rank %d sent bytes [%d, %d) of a %d-byte message (%d already received)",
			errProtocol, p.rank, off, off+n, d.size, d.received)
	}
	if !d.req.begin() {
		delete(p.rdvRecv, h.msgID)
		e.mu.Unlock()
		return c.discard(n)
	}
	d.received += n
	if d.received == d.size {
		delete(p.rdvRecv, h.msgID)
	}
	e.mu.Unlock()
	if err := c.readBody(d.req.buf[off : off+n]); err != nil {
		d.req.end(0, false)
		return err
	}
	d.req.end(n, true)
	return nil
}
