package collective

import (
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// send posts buf to peer as the pair's next message. The pair's first
// message travels with this rank's header when it is small enough.
func (o *operation) send(peer int, buf []byte) transport.Request {
	p := o.touch(peer)
	p.sendSeq++
	if !p.announced {
		if p.sendSeq == 1 && o.inlines(peer, buf) {
			return o.announce(peer, buf, true)
		}
		if peer != o.c.rank { // to itself, both would share a tag's receives (inlines)
			return o.announceWith(peer, buf)
		}
		o.announce(peer, nil, false)
	}
	r := o.c.ep.Send(o.c.ranks[peer], transport.Tag{OpKey: o.key, Seq: p.sendSeq}, buf)
	o.reqs = append(o.reqs, r)
	return r
}

// pendingRecv is a posted data receive whose sender's header is checked
// before its bytes are trusted. The pair's first receive, when small
// (first), is posted only once the header has shown whether it carries the
// message; until then req is nil.
type pendingRecv struct {
	peer  int
	buf   []byte
	seq   uint32
	first bool
	tail  bool // posted with the header's receive (recvWithHeader); req nil until settled
	req   transport.Request
}

// recv posts a receive of the pair's next message from peer into buf; the
// message must fill buf exactly.
func (o *operation) recv(peer int, buf []byte) pendingRecv {
	p := o.touch(peer)
	p.recvSeq++
	pr := pendingRecv{peer: peer, buf: buf, seq: p.recvSeq}
	if pr.seq == 1 && peer != o.c.rank && !o.inlines(peer, buf) && o.recvWithHeader(p, peer, buf) {
		pr.tail = true
		return pr
	}
	o.postHeader(p, peer)
	if pr.seq == 1 && o.inlines(peer, buf) {
		pr.first = true
		p.firstOpen, p.firstBuf = true, buf
		return pr
	}
	pr.req = o.postRecv(peer, pr.seq, buf)
	return pr
}

// endLateHeaders ends o.lateHeaders: it posts the header receives that
// touch left to recv and recv did not post.
func (o *operation) endLateHeaders() {
	o.lateHeaders = false
	for peer := range o.peers {
		o.postHeader(&o.peers[peer], peer)
	}
}

// inlines reports whether buf, as the first message of a pair, travels
// with the sender's header: when it is small and the pair is not this rank
// with itself (whose two directions share the header tag, so that a
// point-to-point Send and Recv to oneself may take each other's header).
func (o *operation) inlines(peer int, buf []byte) bool {
	return len(buf) <= inlineBytesMax && peer != o.c.rank
}

// postRecv posts the receive of the pair's message seq from peer.
func (o *operation) postRecv(peer int, seq uint32, buf []byte) transport.Request {
	r := o.c.ep.Recv(o.c.ranks[peer], transport.Tag{OpKey: o.key, Seq: seq}, buf)
	o.reqs = append(o.reqs, r)
	return r
}

// waitRecv waits for a posted receive, checking the sender's header first.
func (o *operation) waitRecv(pr pendingRecv) error {
	if err := o.checkHeader(pr.peer); err != nil {
		return err
	}
	p := &o.peers[pr.peer]
	if pr.seq == 1 && p.carried && !pr.first {
		return o.fail(fmt.Errorf("rank %d sent %d bytes where %d were expected", pr.peer, len(p.inline), len(pr.buf)))
	}
	if pr.first {
		taken, err := o.takeFirst(pr.peer)
		if taken || err != nil {
			return err
		}
		pr.req = p.firstReq
	}
	if pr.tail {
		n, r := o.settleTail(pr.peer)
		if r == nil {
			if n != len(pr.buf) {
				return o.fail(fmt.Errorf("rank %d sent %d bytes where %d were expected", pr.peer, n, len(pr.buf)))
			}
			return nil
		}
		pr.req = r
	}
	n, err := o.await(pr.req, pr.peer)
	if err != nil {
		return o.fail(o.peerErr(pr.peer, err))
	}
	if n != len(pr.buf) {
		return o.fail(fmt.Errorf("rank %d sent %d bytes where %d were expected", pr.peer, n, len(pr.buf)))
	}
	return nil
}

// wait waits for a posted send to peer, checking peer's header first: a
// peer that called another operation may never take the message.
func (o *operation) wait(r transport.Request, peer int) error {
	if err := o.checkHeader(peer); err != nil {
		return err
	}
	if _, err := o.await(r, peer); err != nil {
		return o.fail(o.peerErr(peer, err))
	}
	return nil
}
