//go:build linux

package shm

import (
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// heldTail takes for r, a RecvHead whose head of headLen bytes came before
// it, the rendezvous of its tail if that came too (held in unexpected
// behind the head) and fits: it claims it and counts r's copy (state
// copying), which copyTail then makes. The caller holds e.mu.
func (e *Endpoint) heldTail(r *request, headLen int) (slot, bool) {
	if r.tail == nil || headLen > len(r.buf) {
		return slot{}, false
	}
	q := e.unexpected[r.tailKey]
	if len(q) == 0 || !q[0].rdv || !e.tailFits(r, q[0].s) {
		return slot{}, false
	}
	s := q[0].s
	popFront(e.unexpected, r.tailKey, q, &e.unexFree)
	if !e.claim(int(r.tailKey.peer), s) {
		return slot{}, false // withdrawn by its sender: as if never sent
	}
	r.state.Store(stateCopying)
	e.copying.Add(1)
	return s, true
}

// tailFits reports whether the rendezvous s may be taken by r's RecvHead
// with its head: it is r's tail message, fits r's tail buffer, and no
// receive of it was posted before r. The caller holds e.mu.
func (e *Endpoint) tailFits(r *request, s slot) bool {
	return r.tail != nil && s.kind == kindRendezvous && s.length <= uint64(len(r.tail)) &&
		keyOf(int(r.tailKey.peer), s.tag) == r.tailKey && len(e.recvs[r.tailKey]) == 0
}

// deliverInline completes receive r with an inline message.
func deliverInline(r *request, msg []byte) {
	if len(msg) > len(r.buf) {
		r.complete(0, truncated(len(msg), len(r.buf)))
		return
	}
	r.complete(copy(r.buf, msg), nil)
}

func truncated(n, room int) error {
	return fmt.Errorf("shm: %d-byte message into %d-byte buffer: %w", n, room, transport.ErrTruncated)
}

// claim takes the rendezvous send s of peer for copying; false means its
// sender withdrew it. The caller holds e.mu.
func (e *Endpoint) claim(peer int, s slot) bool {
	idx, gen := sendWordOf(s.sendID)
	w := e.peers[peer].seg.sendWord(idx)
	return w.CompareAndSwap(sendWordValue(gen, sendPosted), sendWordValue(gen, sendClaimed))
}

// copyRendezvous copies the claimed message s of peer into receive r (in
// state copying, counted in e.copying), tells the sender (peer.copied) and
// completes r.
func (e *Endpoint) copyRendezvous(peer int, s slot, r *request) {
	defer e.copying.Done()
	n, err := e.readRendezvous(peer, s, r, r.buf)
	r.complete(n, err)
}

// copyTail is copyRendezvous for the tail of RecvHead r, whose head of
// headN bytes is in r.buf: it copies s into r.tail and completes r with
// the head's length.
func (e *Endpoint) copyTail(peer int, s slot, r *request, headN int) {
	defer e.copying.Done()
	n, err := e.readRendezvous(peer, s, r, r.tail)
	if err == nil {
		r.tailN, r.tailOK = n, true
		e.peers[peer].count.Count(false, n)
	}
	r.complete(headN, err)
}

// readRendezvous copies the claimed message s of peer into dst, a buffer
// of r, and tells the sender (peer.copied); it returns the bytes copied.
// The balancer notes where this rank runs after each system call of the
// copy, the last one included (chunkHook), and not again after it.
func (e *Endpoint) readRendezvous(peer int, s slot, r *request, dst []byte) (int, error) {
	p := e.peers[peer]
	n := int(s.length)
	var err error
	if n > len(dst) {
		err = truncated(n, len(dst))
	} else if err = readRemote(p.pid, dst[:n], s.addr, p.nonceAddr, p.nonce, &r.proof, e.balance.chunkHook()); err == nil &&
		p.nonceAddr == 0 && p.pidfd >= 0 && exited(p.pidfd) {
		err = &transport.PeerError{Rank: peer, Err: errExited} // its pid may name another process now
	} else if err != nil {
		err = &transport.PeerError{Rank: peer, Err: err}
	} else {
		e.stats.bytesCopied.Add(uint64(n))
	}
	if ferr := p.copied(s.sendID); ferr != nil && err == nil {
		err = ferr
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}
