package collective

import (
	"fmt"
	"sync"

	"github.com/gocoll/gocoll/transport"
)

// peerState is an operation's exchange with one peer: the headers each way
// and the pair's message counters.
type peerState struct {
	touched          bool // the receive of the peer's header is posted
	announced        bool // this rank's header has been sent to the peer
	checked          bool // the peer's header arrived and matched
	checking         bool // a wait for this header is under way
	sendSeq, recvSeq uint32
	hdrIn            []byte // the peer's header message, headerMsgMax bytes
	hdrReq           transport.Request
	// lateHeader: touched while o.lateHeaders held, the header's receive
	// not yet posted (postHeader).
	lateHeader bool
	// tailOpen: hdrReq is a receive of the header with the pair's first
	// data message (transport.HeadReceiver), whose receive recv has not
	// posted on its own; settled by settleTail.
	tailOpen bool
	tailBuf  []byte

	// Set by checkHeader: whether the peer's header carried the pair's
	// first data message, and that message (aliasing hdrIn).
	carried bool
	inline  []byte

	// The pair's small first receive, posted by recv but not yet settled
	// (firstOpen); taken once the carried message was copied; firstReq
	// once posted on its own.
	firstOpen bool
	firstBuf  []byte
	taken     bool
	firstReq  transport.Request
	// early is the receive of the pair's first message as a message of
	// its own, posted before the header came by an eager call that
	// returned (postFirstEarly); not in o.reqs until the header shows the
	// message did not ride in it.
	early transport.Request
}

// headerBufs keeps header message buffers for reuse: an operation takes
// them for its header receives and sends and gives them back when it has
// ended, when no request of it holds one any more (see execute).
var headerBufs = sync.Pool{New: func() any { return new([headerMsgMax]byte) }}

// headerBuf lends the operation a header message buffer until it ends.
func (o *operation) headerBuf() []byte {
	b := headerBufs.Get().(*[headerMsgMax]byte)
	o.hdrBufs = append(o.hdrBufs, b)
	return b[:]
}

// releaseHeaderBufs gives back the operation's header buffers. Only
// execute calls it, once finish or fail has settled every request.
func (o *operation) releaseHeaderBufs() {
	for _, b := range o.hdrBufs {
		headerBufs.Put(b)
	}
	o.hdrBufs = nil
}

// touch posts the receive of peer's header, the first time the operation
// talks to peer. This rank's own header goes later (announce). While
// o.lateHeaders holds, the receive waits for recv or postHeader.
func (o *operation) touch(peer int) *peerState {
	p := &o.peers[peer]
	if p.touched {
		return p
	}
	p.touched = true
	o.unannounced++
	p.hdrIn = o.headerBuf()
	if o.lateHeaders {
		p.lateHeader = true
		return p
	}
	p.hdrReq = o.c.ep.Recv(o.c.ranks[peer], transport.Tag{OpKey: o.key}, p.hdrIn)
	return p
}

// postHeader posts the receive of peer's header if touch left it to
// later.
func (o *operation) postHeader(p *peerState, peer int) {
	if p.lateHeader {
		p.lateHeader = false
		p.hdrReq = o.c.ep.Recv(o.c.ranks[peer], transport.Tag{OpKey: o.key}, p.hdrIn)
	}
}

// recvWithHeader posts, where touch left the header's receive to later
// and the endpoint can (transport.HeadReceiver), one receive of peer's
// header and of the pair's first data message, buf, which the sender's
// announceWith sends in one transfer; it reports whether it did. The data
// receive is settled once the header is checked (settleTail).
func (o *operation) recvWithHeader(p *peerState, peer int, buf []byte) bool {
	if !p.lateHeader || o.c.headRecv == nil {
		return false
	}
	r := o.c.headRecv.RecvHead(o.c.ranks[peer], transport.Tag{OpKey: o.key}, p.hdrIn,
		transport.Tag{OpKey: o.key, Seq: 1}, buf)
	if r == nil {
		return false
	}
	p.lateHeader, p.hdrReq, p.tailOpen, p.tailBuf = false, r, true, buf
	return true
}

// settleTail settles, once peer's header has been checked, the pair's
// first data receive that recvWithHeader posted with it: it returns the
// bytes received if the message came with the header, else it posts the
// message's own receive and returns its request.
func (o *operation) settleTail(peer int) (n int, r transport.Request) {
	p := &o.peers[peer]
	if !p.tailOpen || !p.checked {
		panic("collective: data receive settled twice or before its header")
	}
	p.tailOpen = false
	buf := p.tailBuf
	p.tailBuf = nil
	if n, ok := transport.TailOf(p.hdrReq); ok {
		return n, nil
	}
	return 0, o.postRecv(peer, 1, buf)
}

// announce sends this rank's header to the touched peer, as message 0 of
// the pair; when carries is set, first (the pair's first data message,
// at most inlineBytesMax bytes, copied) travels in the same message.
func (o *operation) announce(peer int, first []byte, carries bool) transport.Request {
	r := o.c.ep.Send(o.c.ranks[peer], transport.Tag{OpKey: o.key}, o.headerMessage(peer, first, carries))
	o.reqs = append(o.reqs, r)
	return r
}

// announceWith sends this rank's header to the touched peer and then buf,
// the pair's first data message, too large to ride in it: in one transfer
// where the transport can (transport.HeadSender: in the slot of shared
// memory's rendezvous), else as announce and send would. It returns buf's
// request.
func (o *operation) announceWith(peer int, buf []byte) transport.Request {
	msg := o.headerMessage(peer, nil, false)
	hr, r := transport.SendWithHead(o.c.ep, o.c.ranks[peer], transport.Tag{OpKey: o.key}, msg,
		transport.Tag{OpKey: o.key, Seq: o.peers[peer].sendSeq}, buf)
	o.reqs = append(o.reqs, hr, r)
	return r
}

// headerMessage marks this rank's header as sent to peer and returns its
// message, first (copied) after it when carries is set.
func (o *operation) headerMessage(peer int, first []byte, carries bool) []byte {
	p := &o.peers[peer]
	if p.announced {
		panic("collective: header announced twice")
	}
	p.announced = true
	o.unannounced--
	h := o.hdr
	if o.pairs != nil {
		h.pairCount, _ = o.pairs(peer)
	}
	h.carries = carries
	msg := o.headerBuf()[:headerLen+len(first)]
	h.marshal(msg)
	copy(msg[headerLen:], first)
	return msg
}

// announceTouched sends this rank's header to every touched peer that
// lacks it. Every wait starts with it, so that no rank waits while a peer
// it talks to still waits for its header.
func (o *operation) announceTouched() {
	if o.unannounced == 0 {
		return
	}
	for peer := range o.peers {
		if p := &o.peers[peer]; p.touched && !p.announced {
			o.announce(peer, nil, false)
		}
	}
}

// touchPartners touches this rank's neighbours in the binomial spanning
// tree of the communicator (rank r's parent is r with its lowest set bit
// cleared), once. The tree depends on nothing but the communicator, so
// ranks that called different operations still exchange headers along a
// connected graph: somewhere two neighbours disagree, and each checks the
// other's header while it waits or when it finishes, so a mismatch is
// always found. Its edges are those of recursive doubling and of the
// binomial trees rooted at 0, whose headers travel with their data.
func (o *operation) touchPartners() {
	if !o.partners || o.treeTouched {
		return
	}
	o.treeTouched = true
	o.forPartners(func(p int) { o.touch(p) })
}

// touchFarPartners touches, once, at the operation's first wait, the
// partners (touchPartners) on another site than this rank's, so that
// their headers cross the WAN while the operation runs: sent at the end,
// a header from a partner the algorithm never talked to took one more WAN
// latency (a ring in rank order over two sites: 4 WAN latencies of data
// and a fifth for rank 0's and rank n/2's headers). The nearer partners
// wait for touchPartners (a long wait's first tick, or finish), so that
// an algorithm that talks to them later still carries its first message
// in its header; the cost model prices both (tune's partnerLatency).
func (o *operation) touchFarPartners() {
	if !o.partners || o.farTouched || o.c.topo == nil {
		return
	}
	o.farTouched = true
	site := func(r int) string { return o.c.topo.Ranks[r].SiteName() }
	mine := site(o.c.rank)
	o.forPartners(func(p int) {
		if site(p) != mine {
			o.touch(p)
		}
	})
}

// forPartners calls f with each of this rank's partners (touchPartners).
func (o *operation) forPartners(f func(int)) {
	n, r := o.c.Size(), o.c.rank
	if r > 0 {
		f(r & (r - 1))
	}
	for bit := 1; r+bit < n && (r == 0 || bit < r&-r); bit <<= 1 {
		f(r + bit)
	}
}

// scanHeaders checks every header that has arrived and not been checked.
func (o *operation) scanHeaders() error {
	for peer := range o.peers {
		p := &o.peers[peer]
		if !p.touched || p.checked {
			continue
		}
		o.postHeader(p, peer)
		select {
		case <-p.hdrReq.Done():
			if err := o.checkHeader(peer); err != nil {
				return err
			}
		default:
		}
	}
	return nil
}

// checkHeader waits for peer's header and compares it with this rank's.
func (o *operation) checkHeader(peer int) error {
	if o.err != nil {
		return o.err
	}
	p := &o.peers[peer]
	if p.checked {
		return nil
	}
	if p.checking {
		return nil // scanHeaders called from the wait below
	}
	o.postHeader(p, peer)
	p.checking = true
	n, err := o.await(p.hdrReq, peer)
	p.checking = false
	if err != nil {
		return o.fail(o.peerErr(peer, err))
	}
	theirs, inline, err := parseHeader(p.hdrIn[:n])
	if err != nil {
		return o.fail(fmt.Errorf("from rank %d: %w", peer, err))
	}
	mine := o.hdr
	if o.pairs != nil {
		_, mine.pairCount = o.pairs(peer)
	}
	if err := mismatch(mine, o.c.rank, theirs, peer); err != nil {
		return o.fail(err)
	}
	p.checked, p.carried, p.inline = true, theirs.carries, inline
	return nil
}

// takeFirst settles the pair's small first receive once peer's header has
// been checked: it copies the message the header carried (taken), or else
// posts the receive of the message that follows as p.firstReq.
func (o *operation) takeFirst(peer int) (taken bool, err error) {
	p := &o.peers[peer]
	if !p.firstOpen || !p.checked {
		panic("collective: first receive settled twice or before its header")
	}
	p.firstOpen = false
	buf := p.firstBuf
	p.firstBuf = nil
	if !p.carried {
		if p.early != nil {
			p.firstReq, p.early = p.early, nil
			o.reqs = append(o.reqs, p.firstReq)
		} else {
			p.firstReq = o.postRecv(peer, 1, buf)
		}
		return false, nil
	}
	if p.early != nil { // the message rode in the header: nothing comes for it
		p.early.Cancel()
		transport.Release(p.early)
		p.early = nil
	}
	if len(p.inline) != len(buf) {
		return true, o.fail(fmt.Errorf("rank %d sent %d bytes where %d were expected", peer, len(p.inline), len(buf)))
	}
	copy(buf, p.inline)
	p.taken, p.inline = true, nil
	return true, nil
}

// finishFirst settles, at finish, a small first receive nobody waited for,
// and fails if peer's header carried a message no receive took.
func (o *operation) finishFirst(peer int) error {
	p := &o.peers[peer]
	if p.firstOpen {
		_, err := o.takeFirst(peer)
		return err
	}
	if p.carried && !p.taken {
		return o.fail(fmt.Errorf("rank %d sent a %d-byte message this rank did not expect", peer, len(p.inline)))
	}
	return nil
}

// finishTail settles, at finish, a data receive posted with the header's
// (recvWithHeader) that nobody waited for.
func (o *operation) finishTail(peer int) error {
	p := &o.peers[peer]
	if !p.tailOpen {
		return nil
	}
	want := len(p.tailBuf)
	if n, r := o.settleTail(peer); r == nil && n != want {
		return o.fail(fmt.Errorf("rank %d sent %d bytes where %d were expected", peer, n, want))
	}
	return nil
}

// postFirstEarly posts, for an eager call that returns before its headers
// came (eager.go), the receive of each open small first message as a
// message of its own: a peer whose header went ahead of that message
// sends it apart, and over a transport whose sends complete only once
// matched (inproc) the peer would wait for this rank's next call. takeFirst
// keeps it, or cancels it if the message rode in the header after all.
func (o *operation) postFirstEarly() {
	for peer := range o.peers {
		p := &o.peers[peer]
		if p.firstOpen && p.early == nil {
			p.early = o.c.ep.Recv(o.c.ranks[peer], transport.Tag{OpKey: o.key, Seq: 1}, p.firstBuf)
		}
	}
}
