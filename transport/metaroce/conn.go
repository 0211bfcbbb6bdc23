package metaroce

import (
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// ConnID names a connection of an Endpoint. It is also the id the peer puts
// in every packet it sends on the connection.
type ConnID uint64

type connPhase uint8

const (
	phaseConnecting connPhase = iota // HELLO sent, no HELLO-ACK yet
	phaseOpen                        // set up; data may flow
)

// probeReply is a PROBE answer owed on a path.
type probeReply struct {
	due    bool
	nonce  uint64
	sentAt time.Duration
}

// conn is one connection: its paths, its message layer, and its timers.
type conn struct {
	ep        *Endpoint
	cfg       *Config
	id        ConnID
	peer      uint64 // the peer's node id
	peerConn  uint64 // the peer's id for this connection
	initiator bool
	accepted  acceptKey // the HELLO that opened it, for the acceptor
	phase     connPhase
	confirmed bool // the peer is known to have our id (always, for the initiator)
	createdAt time.Duration

	paths    []*path
	replies  []probeReply // per path
	probeDue []bool       // per path
	ctrlDue  int          // replies and probes due, over all paths
	datagram int
	ackRoom  bool // DATA pieces leave wire.AckRoomLen bytes for an ACK (Config.AckRoom)
	snd      sender
	rcv      receiver

	helloAt    time.Duration // next HELLO or HELLO-ACK resend
	helloTries int
	helloFirst time.Duration // when the first HELLO or HELLO-ACK left
	helloSends int           // how many were sent
	helloAck   bool          // a HELLO-ACK is owed at once
	helloEcho  time.Duration // the SentAt of the latest HELLO, for the HELLO-ACK

	// Authentication (auth.go): this side's handshake nonce and the
	// peer's, the mode asked for (initiator) or in use, the keys once
	// derived (nil without a key, and before the HELLO-ACK), and whether
	// a HELLO-ACK failed its proof (the idle timeout then fails with
	// ErrAuth).
	nonce0, peerNonce [wire.NonceLen]byte
	authMode          AuthMode
	auth              *connAuth
	authBad           bool

	ackAt       time.Duration // when an ACK is due; 0: none
	ackWhy      AckReason     // what made it due
	ackPath     int
	lastRecv    time.Duration
	waitFrom    time.Duration // when something last began to wait on the peer (PeerTimeout)
	askAt       time.Duration // when a probe last began the peer's silence that counts (ask.go); 0: none
	budgetGrown uint64        // what this connection's unexpected budget grew (Endpoint.growBudget)
	keepAt      time.Duration // next keepalive probe
	goneAt      time.Duration // when the connection fails with ErrPeerGone; 0: never
	blockAt     time.Duration // next probe while blocked on grant or credit; 0: none
	nonce       uint64

	peerRate uint64        // the peer's target rate for us; 0: none
	paceAt   time.Duration // earliest next DATA under pacing
	paceWait bool          // the last poll was held back by pacing only
	// train is the path of the DATA train being sent, with trainLeft more
	// datagrams to come on it (train.go).
	train     *path
	trainLeft int
	// trainOver is whether the running train may go past its path's
	// window (a short connection's, within the connection's: lanTrains).
	trainOver bool
	// A drain (drain.go) holds DATA until drainUntil; the next is due at
	// drainNext (0: not yet timed), and none starts before drainCool.
	drainUntil, drainNext, drainCool time.Duration
	drainWait                        bool          // the last poll was held back by a drain
	lastSend                         time.Duration // last DATA sent (an idle spell counts as a drain)
	lastData                         time.Duration // last DATA received, for the rate share
	// owdMin is the lowest relative one-way delay (arrival minus the
	// sender's timestamp; the clock offset cancels in a difference with
	// it, which is the queueing on the way in) of DATA datagrams of rxBig
	// bytes or nearly (inboundDelay). The lowest is that of the last one
	// to two floorWindows, not of the connection's life: one wrong arrival
	// (a stamp read across a wall-clock step) or a drift between the
	// hosts' clocks ages out instead of reading as a standing queue for
	// ever.
	owdMin  winMin
	rxBig   int           // the largest DATA datagram received, in bytes
	qMin    queueSpan     // the smallest delay over owdMin over spans of the rate share (recvshare.go)
	active  bool          // counted among the endpoint's active senders
	cursor  int           // rotates tie-breaks among paths
	timer   time.Duration // nextTimeout's result, while timerOK
	timerOK bool

	st ConnStats
}

func newConn(ep *Endpoint, id ConnID, peer uint64, initiator bool, now time.Duration) *conn {
	c := &conn{
		ep: ep, cfg: &ep.cfg, id: id, peer: peer, initiator: initiator, confirmed: initiator,
		createdAt: now, lastRecv: now, helloAt: now, datagram: ep.cfg.MaxDatagram, qMin: queueSpan{cur: -1, last: -1},
	}
	c.snd = newSender(0, ep.cfg.MaxSends, 0, 0, c.sendDone)
	c.rcv = newReceiver(1, uint64(ep.cfg.UnexpectedBytes), uint64(ep.cfg.UnexpectedMax), ep.cfg.MaxRecvs, ep.cfg.MsgWindow, c.recvDone)
	return c
}

// open sets the connection up with the peer's parameters from its HELLO or
// HELLO-ACK.
func (c *conn) open(h *wire.Hello, now time.Duration) {
	c.phase, c.peerConn = phaseOpen, h.Src
	n := min(c.cfg.Paths, int(h.Paths))
	c.datagram = min(c.datagram, int(h.MaxDatagram)) // c.datagram: Config.MaxDatagram or ConnectDatagram's limit
	if c.auth != nil {
		c.datagram -= wire.TrailerLen // what the core builds; the trailer fills the rest
	}
	// Both sides compute the same: the agreed datagram, and AckRoom set in
	// the HELLO-ACK exactly when both asked.
	c.ackRoom = c.cfg.AckRoom && h.AckRoom && c.datagram >= wire.AckRoomMinDatagram
	chunk := c.datagram - wire.DataOverhead
	if c.ackRoom {
		chunk -= wire.AckRoomLen
	}
	c.paths = make([]*path, n)
	for i := range c.paths {
		c.paths[i] = newPath(i, n, c.cfg, c.datagram)
	}
	c.replies, c.probeDue = make([]probeReply, n), make([]bool, n)
	c.snd.chunk, c.snd.creditLimit, c.snd.peerWindow = chunk, h.Budget, uint64(h.MsgWindow)
	c.rcv.chunk = uint64(chunk)
	c.keepAt = now + c.cfg.IdleTimeout/4
	c.st.Established, c.st.Paths, c.st.Peer = true, n, c.peer
}

// helloPacket describes this side's HELLO or HELLO-ACK, sent at now, with
// its proof if keyed; a HELLO-ACK echoes the latest HELLO's timestamp.
func (c *conn) helloPacket(ack bool, path int, now time.Duration) wire.Hello {
	if ack {
		now = c.helloEcho
	}
	datagram := c.datagram
	if c.auth != nil && c.phase == phaseOpen {
		datagram += wire.TrailerLen
	}
	h := wire.Hello{
		Ack: ack, Conn: c.peerConn, Path: uint8(path), Src: uint64(c.id), Node: c.cfg.NodeID,
		Paths: uint16(c.cfg.Paths), MaxDatagram: uint32(datagram),
		MsgWindow: uint32(c.cfg.MsgWindow), Budget: uint64(c.cfg.UnexpectedBytes),
		SentAt: now, Auth: uint8(c.authMode), Nonce: c.nonce0,
		// A HELLO asks; a HELLO-ACK answers for both.
		AckRoom: c.cfg.AckRoom && (!ack || c.ackRoom),
	}
	if c.ep.keyed() {
		var echo []byte
		if ack {
			echo = c.peerNonce[:]
		}
		h.Proof = c.ep.helloProof(&h, echo)
	}
	return h
}

// handle processes a datagram for this connection that wire.Open accepted,
// as its header h and body. It returns a drop reason counter to bump, or
// nil.
// handle processes a packet handed over at now that arrived at at (<= now).
func (c *conn) handle(now, at time.Duration, pathIdx int, ce bool, h wire.Header, body []byte) *int64 {
	if c.phase == phaseOpen && pathIdx >= len(c.paths) {
		return &c.ep.st.DropBadPath
	}
	switch h.Type {
	case wire.TypeHelloAck:
		return c.handleHelloAck(now, h, body)
	case wire.TypeData:
		return c.handleData(now, at, pathIdx, ce, h, body)
	case wire.TypeAck:
		return c.handleAck(now, at, h, body)
	case wire.TypeProbe:
		return c.handleProbe(now, at, pathIdx, h, body)
	case wire.TypeClose:
		var cl wire.Close
		if wire.DecodeClose(h, body, &cl) != nil {
			return &c.ep.st.DropMalformed
		}
		if cl.Code == wire.CloseAuth {
			// A refusal of our HELLO, believed only with its nonce echo.
			if c.phase != phaseConnecting || cl.Echo != c.nonce0 {
				return &c.ep.st.DropAuth
			}
			c.ep.fail(now, c, c.ep.refusedErr(c.peer), false)
			return nil
		}
		if c.ep.keyed() && c.auth == nil {
			return &c.ep.st.DropAuth // unauthenticated, before the keys
		}
		c.ep.fail(now, c, ErrPeerClosed, false)
		return nil
	}
	return &c.ep.st.DropMalformed
}

// heard notes a valid packet from the peer. The first one an acceptor
// hears after its HELLO-ACK times the handshake's round trip, from the
// first HELLO-ACK (which the initiator answers at once, unless it was
// lost: then the sample is long, which errs on the safe side).
func (c *conn) heard(now time.Duration) {
	c.lastRecv = now
	if c.goneAt != 0 {
		c.goneAt, c.timerOK = 0, false // alive: the report of its closed port was stale (HandlePeerGone)
	}
	if !c.confirmed && c.helloSends > 0 {
		c.seedRTT(now - c.helloFirst)
	}
	c.confirmed = true
}

// seedRTT starts the RTT of every path without a sample from the
// handshake's round trip instead of Config.InitialRTT (rttEstimator.seed),
// so that no path times out within the handshake's RTT.
func (c *conn) seedRTT(rtt time.Duration) {
	for _, p := range c.paths {
		p.rtt.seed(rtt, c.cfg.InitialRTT/2)
		p.fab.seed(rtt, c.cfg.InitialRTT/2)
	}
}

// minSRTT is the smallest smoothed RTT among the paths (seeded from the
// handshake on a side that has sent no data).
func (c *conn) minSRTT() time.Duration {
	rtt := c.paths[0].rtt.srtt
	for _, p := range c.paths[1:] {
		rtt = min(rtt, p.rtt.srtt)
	}
	return rtt
}

func (c *conn) handleHelloAck(now time.Duration, hd wire.Header, body []byte) *int64 {
	var h wire.Hello
	if wire.DecodeHello(hd, body, &h) != nil || !h.Ack {
		return &c.ep.st.DropMalformed
	}
	if c.ep.keyed() {
		if AuthMode(h.Auth) < c.authMode || !c.ep.helloProven(&h, c.nonce0[:]) {
			c.authBad = c.authBad || c.phase == phaseConnecting
			return &c.ep.st.DropAuth
		}
	} else if h.Auth != uint8(AuthNone) {
		return &c.ep.st.DropMalformed
	}
	c.heard(now)
	if c.phase == phaseConnecting {
		if c.ep.keyed() {
			c.authMode, c.peerNonce = AuthMode(h.Auth), h.Nonce
			c.auth = newConnAuth(c.cfg.Auth.Key, c.authMode, c.cfg.Paths, true,
				authSide{c.nonce0, c.cfg.NodeID, uint64(c.id)}, authSide{h.Nonce, h.Node, h.Src})
		}
		c.open(&h, now)
		if h.SentAt <= now {
			c.seedRTT(now - h.SentAt) // the answered HELLO's timestamp, echoed
		}
		c.ep.emit(Event{Kind: EventConnected, Conn: c.id, Peer: c.peer})
	}
	c.ackAt, c.ackWhy = now, AckControl // confirms to the acceptor that we are set up
	return nil
}

func (c *conn) handleData(now, at time.Duration, pathIdx int, ce bool, h wire.Header, body []byte) *int64 {
	d := &c.ep.data
	if wire.DecodeData(h, body, d) != nil {
		return &c.ep.st.DropMalformed
	}
	return c.acceptData(now, at, pathIdx, ce, d, wire.HeaderLen+len(body)+wire.CRCLen)
}

// acceptData processes DATA packet d, of size bytes on the wire, that
// arrived on path pathIdx at at (<= now, handed over at now) and parsed
// whole. Its payload may already lie where it belongs (see
// Endpoint.Placement). The arrival times its one-way delay and the hold
// its ACK reports; everything else takes now.
func (c *conn) acceptData(now, at time.Duration, pathIdx int, ce bool, d *wire.Data, size int) *int64 {
	if c.phase != phaseOpen || int(d.Path) != pathIdx || pathIdx >= len(c.paths) {
		return &c.ep.st.DropBadPath
	}
	c.heard(now)
	if d.Flags&wire.FlagAck != 0 {
		a := &c.ep.ack
		if wire.DecodeAck(wire.Header{Type: wire.TypeAck, Path: d.Path, Conn: d.Conn}, d.AckBody, a) != nil {
			panic("metaroce: a parsed DATA packet carries a malformed piggybacked ACK")
		}
		c.applyAck(now, at, a)
	}
	p := c.paths[pathIdx]
	if p.recv.seen(d.Seq) {
		// A copy made by the network, or a resend of what arrived:
		// acknowledge again (the path due in the next ACKs), place
		// nothing.
		p.recv.dups++
		p.recv.repeat = ackRepeats
		c.ackSoon(now, pathIdx, AckDup)
		return nil
	}
	whole := c.rcv.whole
	if !c.rcv.piece(d, now) {
		c.st.Discarded = c.rcv.discarded
		return nil
	}
	whole = c.rcv.whole - whole
	c.ep.growBudget(now, c)
	p.recv.receive(d.Seq, d.SentAt, at, ce)
	c.lastData = now
	c.inboundDelay(at-d.SentAt, size, now)
	c.ep.markActive(c, size)
	// The last piece of a message is acknowledged at once, so that its
	// send completes, except with DelaySmallAcks for a one-piece message,
	// which also waits for smallAckEvery packets rather than AckEvery (no
	// window of a bulk transfer waits on it).
	// On a long connection the count is over all paths and the hold is
	// longer (ackhold.go), and the piece that completes a message is
	// acknowledged at once too, last or not (its pieces cross on several
	// paths): else the send's completion waited up to the hold, 250 µs
	// (TestAckCompletesMessage).
	small := c.cfg.DelaySmallAcks && d.Flags&(wire.FlagFirst|wire.FlagLast) == wire.FlagFirst|wire.FlagLast
	rtt := c.ackRTT()
	every, overall := c.ackEvery(rtt)
	if small {
		every = max(every, smallAckEvery)
	}
	count := p.recv.bursts // a train counts once (recvPath.burstEcho)
	if overall {
		count = c.unackedAll()
	}
	last := (d.Flags&wire.FlagLast != 0 || overall && whole > 0) && !small
	why := AckHeld
	switch {
	case p.recv.gap:
		why = AckGap
	case d.Flags&(wire.FlagAnnounce|wire.FlagAbort) != 0:
		why = AckControl
	case last:
		why = AckLast
	case count >= every:
		why = AckEvery
	}
	c.ackWithin(now, c.ackPathFor(now, pathIdx, overall, rtt), why, ackHold(c.cfg, rtt))
	return nil
}

func (c *conn) handleProbe(now, at time.Duration, pathIdx int, h wire.Header, body []byte) *int64 {
	var pr wire.Probe
	if wire.DecodeProbe(h, body, &pr) != nil {
		return &c.ep.st.DropMalformed
	}
	if c.phase != phaseOpen || int(pr.Path) != pathIdx {
		return &c.ep.st.DropBadPath
	}
	c.heard(now)
	if !pr.Reply {
		if !c.replies[pathIdx].due {
			c.ctrlDue++
		}
		c.replies[pathIdx] = probeReply{due: true, nonce: pr.Nonce, sentAt: pr.SentAt}
		c.ackSoon(now, pathIdx, AckControl) // a prober may wait for credit or grants
		return nil
	}
	p := c.paths[pathIdx]
	if end := now - c.ep.ownWait(at, now); p.probeAnswered(pr.Nonce) && pr.SentAt <= end {
		p.rtt.sample(end-pr.SentAt, now)
		p.fab.sample(end-pr.SentAt, now)
		before := p.state
		p.heardFrom()
		c.notePath(p, before)
		c.refreshFirstRTO()
	}
	return nil
}

// notePath reports a change of a path between good, suspect and dead.
func (c *conn) notePath(p *path, before PathState) {
	norm := func(s PathState) PathState {
		if s == PathSkip {
			return PathGood
		}
		return s
	}
	if norm(before) != norm(p.state) {
		c.ep.emit(Event{Kind: EventPathState, Conn: c.id, Peer: c.peer, Path: int(p.idx), State: norm(p.state)})
	}
}

// probeBest queues a probe on the best usable path (path 0 if none).
func (c *conn) probeBest() {
	best := 0
	for i, p := range c.paths {
		if p.usable() && (!c.paths[best].usable() || p.rtt.srtt < c.paths[best].rtt.srtt) {
			best = i
		}
	}
	c.dueProbe(best)
}

// dueProbe queues a probe on path i.
func (c *conn) dueProbe(i int) {
	if !c.probeDue[i] {
		c.probeDue[i] = true
		c.ctrlDue++
	}
}

func (c *conn) sendDone(m *outMsg, err error) {
	if err == nil {
		c.st.MsgsSent++
		c.st.BytesSent += int64(len(m.data))
	}
	c.ep.emit(Event{Kind: EventSendDone, Conn: c.id, Peer: c.peer, Stream: m.key.stream, Msg: m.key.msg, N: len(m.data), Err: err})
}

func (c *conn) recvDone(m *inMsg, n int, err error) {
	if err == nil {
		c.st.MsgsRecv++
		c.st.BytesRecv += int64(n)
	}
	c.ep.emit(Event{Kind: EventRecvDone, Conn: c.id, Peer: c.peer, Stream: m.key.stream, Msg: m.key.msg, N: n, Err: err})
}
