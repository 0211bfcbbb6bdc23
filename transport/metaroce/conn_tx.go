package metaroce

import (
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// poll writes the connection's next datagram into buf[:0] and returns it
// with its path, or false if nothing may be sent at now. Order: handshake,
// probe replies, probes, ACK, data.
func (c *conn) poll(now time.Duration, buf []byte) ([]byte, int, bool) {
	if b, path, ok := c.pollHandshake(now, buf); ok {
		return b, path, true
	}
	if c.phase != phaseOpen {
		return nil, 0, false
	}
	for i := range c.replies {
		if c.ctrlDue == 0 {
			break
		}
		if r := &c.replies[i]; r.due {
			r.due, c.ctrlDue = false, c.ctrlDue-1
			pr := wire.Probe{Conn: c.peerConn, Path: uint8(i), Reply: true, Nonce: r.nonce, SentAt: r.sentAt}
			return wire.AppendProbe(buf[:0], &pr), i, true
		}
	}
	for i, due := range c.probeDue {
		if c.ctrlDue == 0 {
			break
		}
		if due {
			c.probeDue[i], c.ctrlDue = false, c.ctrlDue-1
			c.nonce++
			c.paths[i].probeSent(c.nonce)
			c.noteAsk(now)
			pr := wire.Probe{Conn: c.peerConn, Path: uint8(i), Nonce: c.nonce, SentAt: now}
			return wire.AppendProbe(buf[:0], &pr), i, true
		}
	}
	if c.ackAt != 0 && now >= c.ackAt {
		c.countAck()
		return c.buildAck(now, buf, c.datagram), c.ackRoute(), true
	}
	if !c.confirmed {
		return nil, 0, false
	}
	return c.pollData(now, buf)
}

// pollHandshake sends a due HELLO or HELLO-ACK, resending with backoff.
func (c *conn) pollHandshake(now time.Duration, buf []byte) ([]byte, int, bool) {
	due := c.helloAck ||
		(now >= c.helloAt && (c.phase == phaseConnecting || (!c.confirmed && c.snd.hasWork())))
	if !due {
		return nil, 0, false
	}
	c.helloAck = false
	n := c.cfg.Paths
	if c.phase == phaseOpen {
		n = len(c.paths)
	}
	path := c.helloTries % n
	c.helloTries++
	if c.helloSends == 0 {
		c.helloFirst = now
	}
	c.helloSends++
	c.helloAt = now + min(c.cfg.InitialRTT<<min(c.helloTries, 20), c.cfg.MaxRTO)
	h := c.helloPacket(c.phase == phaseOpen, path, now)
	return wire.AppendHello(buf[:0], &h), path, true
}

// ackRoute picks the path for an ACK: the one the data came on, unless this
// side knows it to be broken.
func (c *conn) ackRoute() int {
	if c.paths[c.ackPath].usable() {
		return c.ackPath
	}
	for i, p := range c.paths {
		if p.usable() {
			return i
		}
	}
	return c.ackPath
}

// buildAck writes an ACK of at most limit bytes with a block for every path
// due (recvPath.due: those with unacknowledged packets first, then those
// reported fewer than ackRepeats times since), the grants owed, the credit
// and this sender's rate share.
func (c *conn) buildAck(now time.Duration, buf []byte, limit int) []byte {
	c.ackAt = 0
	maxBlocks := min((limit-wire.AckLen(0, 0))/wire.AckBlockLen, len(c.paths))
	blocks := c.ep.blocks[:0]
	for pass := range 2 {
		for i, p := range c.paths {
			fresh := p.recv.unacked > 0 || p.recv.gap
			if len(blocks) < maxBlocks && p.recv.due() && fresh == (pass == 0) {
				blocks = append(blocks, wire.AckBlock{})
				p.recv.block(uint8(i), now, &blocks[len(blocks)-1])
			}
		}
	}
	c.ep.blocks = blocks
	maxGrants := (limit - wire.AckLen(len(blocks), 0)) / 8
	grants := c.rcv.takeGrants(c.ep.grants[:0], now, c.srtt(), maxGrants)
	c.ep.grants = grants
	a := wire.Ack{
		Conn: c.peerConn, Path: uint8(c.ackRoute()), Rate: c.ep.share(now),
		Credit: c.rcv.credit(), FinBase: c.rcv.finBase, SentAt: now,
	}
	c.rcv.advertised = c.rcv.released
	c.st.Share = int64(a.Rate)
	return wire.AppendAck(buf[:0], &a, blocks, grants)
}

// receivedData reports whether the peer has sent any DATA on the
// connection, so that an ACK means something to it.
func (c *conn) receivedData() bool {
	for _, p := range c.paths {
		if p.recv.received > 0 {
			return true
		}
	}
	return false
}

// srtt returns the smallest smoothed RTT among the paths.
func (c *conn) srtt() time.Duration {
	t := c.cfg.MaxRTO
	for _, p := range c.paths {
		t = min(t, p.rtt.srtt)
	}
	return t
}

// inflight returns the datagram bytes in flight on all paths.
func (c *conn) inflight() int {
	n := 0
	for _, p := range c.paths {
		n += p.inflight
	}
	return n
}

// windowCap is the connection's total window under the peer's target rate:
// rate x (base RTT + the peer's ACK hold, ackHold or the longest seen lately), at least two datagrams so that
// delayed ACKs do not stall it; 0 means no cap.
func (c *conn) windowCap() int {
	if c.peerRate == 0 {
		return 0
	}
	var base, hold time.Duration
	for _, p := range c.paths {
		if p.usable() {
			base = max(base, p.rtt.base())
			hold = max(hold, p.held.value())
		}
	}
	return max(int(float64(c.peerRate)*(base+max(ackHold(c.cfg, base), hold)).Seconds()), 2*c.datagram)
}

// pickPath returns the usable path with the most room, good paths before
// skipped ones, or nil.
func (c *conn) pickPath(now time.Duration) *path {
	var best *path
	bestRoom := 0
	n := len(c.paths)
	for k := range n {
		p := c.paths[(c.cursor+k)%n]
		p.refreshState(now)
		room := p.room()
		if room <= 0 {
			continue
		}
		better := best == nil ||
			(p.state == PathGood && best.state == PathSkip) ||
			(p.state == best.state && room > bestRoom)
		if better {
			best, bestRoom = p, room
		}
	}
	if best != nil {
		c.cursor = (int(best.idx) + 1) % n
	}
	return best
}

// homeMaxPieces is the most pieces a message may have to take the home
// path (homePath).
const homeMaxPieces = 2

// homePath returns the path a small message (at most homeMaxPieces
// pieces) takes: the first good path with room, or p (the scheduler's
// choice) if there is none. Small messages then share one path, whose
// ACKs come back on it too, so that a driver with a reader per path socket
// wakes one reader for a burst of them (and reads a message's pieces with
// one call) rather than one per path; large messages still spread over
// every path.
func (c *conn) homePath(p *path) *path {
	for _, q := range c.paths {
		if q.state == PathGood && q.room() > 0 {
			return q
		}
	}
	return p
}

// pollData sends the next piece, if the transmit rules (dataHold) and the
// message layer allow.
func (c *conn) pollData(now time.Duration, buf []byte) ([]byte, int, bool) {
	c.paceWait, c.drainWait = false, false
	if !c.snd.hasWork() {
		return nil, 0, false
	}
	if c.draining(now) {
		c.drainWait = true
		return nil, 0, false
	}
	hold, p := c.dataHold(now, false)
	if hold != LimitReady {
		c.paceWait = hold == LimitPace
		return nil, 0, false
	}
	pc, ok := c.snd.nextPiece()
	if !ok {
		c.trainLeft = 0
		if c.snd.blocked() && c.inflight() == 0 && c.blockAt == 0 {
			c.blockAt = now + c.rto()
		}
		return nil, 0, false
	}
	m := c.snd.msgs[pc.msgSeq]
	if m.total() <= homeMaxPieces*uint64(c.snd.chunk) {
		p = c.homePath(p)
	}
	sentAt := c.sentAtFor(p, now)
	d := &c.ep.data
	*d = wire.Data{
		Conn: c.peerConn, Path: p.idx, Flags: pc.flags, SentAt: sentAt,
		Stream: m.key.stream, Msg: m.key.msg, MsgSeq: m.seq, Total: m.total(), Offset: pc.offset,
	}
	if pc.flags&(wire.FlagAnnounce|wire.FlagAbort) == 0 {
		d.Payload = m.data[pc.offset : pc.offset+uint64(pc.length)]
	}
	if c.cfg.PayloadUnchecked {
		d.Flags |= wire.FlagPayloadUnchecked
	}
	d.Seq = p.next
	c.piggyback(now, d)
	var out []byte
	size := wire.DataOverhead + len(d.Payload) + len(d.AckBody)
	if g := c.ep.gatherMin; g > 0 && len(d.Payload) >= g {
		out = wire.AppendDataSplit(buf[:0], d)
		c.ep.gathered = d.Payload
	} else {
		out = wire.AppendData(buf[:0], d)
	}
	p.onSent(sentPacket{
		sentAt: sentAt, msgSeq: pc.msgSeq, offset: pc.offset, length: pc.length,
		size: int32(size), flags: pc.flags,
	}, now, c.cfg)
	rate, peer := c.pace(now, size)
	c.trainSent(p, rate, peer, size, now)
	c.lastSend = now
	return out, int(p.idx), true
}

// piggyback attaches the ACK this side owes, if one waits for its delay and
// Config.PiggybackAcks is on, to DATA d when the whole ACK fits in the
// datagram: a block for every path due (recvPath.due) and every grant
// owed (an ACK cut shorter would leave them unreported until the next
// one). A full piece has room for two blocks where Config.AckRoom holds.
func (c *conn) piggyback(now time.Duration, d *wire.Data) {
	if !c.cfg.PiggybackAcks || c.ackAt == 0 {
		return
	}
	limit := c.datagram - wire.DataOverhead - len(d.Payload) + wire.HeaderLen + wire.CRCLen
	due, grants := 0, 0
	for _, p := range c.paths {
		if p.recv.due() {
			due++
		}
	}
	if c.rcv.owesGrants() {
		grants = len(c.rcv.grants)
	}
	if limit < wire.AckLen(due, grants) {
		return
	}
	if cap(c.ep.ackBuf) < limit {
		c.ep.ackBuf = make([]byte, 0, c.datagram)
	}
	ack := c.buildAck(now, c.ep.ackBuf[:0], limit)
	d.Flags |= wire.FlagAck
	d.AckBody = wire.AckBody(ack)
	c.st.AcksPiggybacked++
}

// dataHold returns the first transmit rule that holds the connection's next
// DATA datagram back at now (LimitRate, LimitPaths, LimitWindow, LimitPace;
// LimitReady: none) and the path the datagram takes (nil if none has room).
// It is the one statement of those rules: pollData sends by it and
// SendState reports it. Pacing and the window under the peer's target rate
// (windowCap) hold a train's first datagram only: the rest of the train
// follow at once on its path (train.go), up to trainLen-1 datagrams past
// the cap (a window-paced train stays within its path's window; a short
// connection's may pass it by the other paths' room: train.go). With look
// the path is found without moving the scheduler (SendState: the running
// train's if it has room, else any with room), else it is the scheduler's
// choice (pickPath, trainPath). The handshake, the drain and the message
// layer are the callers' to ask.
func (c *conn) dataHold(now time.Duration, look bool) (SendLimit, *path) {
	cp, inflight := c.windowCap(), c.inflight()
	if cp > 0 && inflight >= cp+c.trainLeft*c.datagram {
		return LimitRate, nil
	}
	var p *path
	if look {
		p = c.roomyPath()
	} else {
		p = c.trainPath(c.pickPath(now))
	}
	if p == nil {
		for _, q := range c.paths {
			if q.usable() {
				return LimitWindow, nil
			}
		}
		return LimitPaths, nil
	}
	inTrain := c.train == p && c.trainLeft > 0
	switch {
	case !inTrain && cp > 0 && inflight >= cp:
		return LimitRate, p
	case !inTrain && now < c.paceAt:
		return LimitPace, p
	}
	return LimitReady, p
}

// roomyPath returns, changing nothing, the running train's path if the
// train has datagrams left and its path takes one (path.takes), else the
// first path with room, or nil.
func (c *conn) roomyPath() *path {
	if t := c.train; t != nil && c.trainLeft > 0 && t.takes(c.trainOver) {
		return t
	}
	for _, p := range c.paths {
		if p.room() > 0 {
			return p
		}
	}
	return nil
}
