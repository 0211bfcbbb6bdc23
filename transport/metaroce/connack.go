package metaroce

import (
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// smallAckEvery is how many packets a receiver with DelaySmallAcks lets
// one-piece messages bring before it acknowledges at once: an eighth of
// the packets one ACK's bitmap reports.
const smallAckEvery = wire.BitmapBits / 8

// ackSoon schedules an ACK at once, for reason why.
func (c *conn) ackSoon(now time.Duration, pathIdx int, why AckReason) {
	c.ackWithin(now, pathIdx, why, c.cfg.AckDelay)
}

// ackWithin schedules an ACK, at once for reason why, or within hold if
// why is AckHeld (unless one is due sooner already). The reason the ACK
// became due is kept for its count (AckCounts).
func (c *conn) ackWithin(now time.Duration, pathIdx int, why AckReason, hold time.Duration) {
	c.ackPath = pathIdx
	switch {
	case why != AckHeld:
		if c.ackAt == 0 || c.ackAt > now {
			c.ackWhy = why
		}
		c.ackAt = now
	case c.ackAt == 0:
		c.ackAt, c.ackWhy = now+hold, AckHeld
	}
}

// countAck counts an ACK about to be sent alone (EndpointStats.Acks).
func (c *conn) countAck() {
	a := &c.ep.st.Acks
	n, packets := &a.Short, &a.ShortPackets
	if c.ackRTT() >= longAckRTT {
		n, packets = &a.Long, &a.LongPackets
	}
	n[c.ackWhy]++
	*packets += int64(c.unackedAll())
}

func (c *conn) handleAck(now, at time.Duration, h wire.Header, body []byte) *int64 {
	a := &c.ep.ack
	if wire.DecodeAck(h, body, a) != nil {
		return &c.ep.st.DropMalformed
	}
	if c.phase != phaseOpen {
		return &c.ep.st.DropBadPath
	}
	c.heard(now)
	c.applyAck(now, at, a)
	return nil
}

// applyAck acts on an ACK, sent alone or piggybacked on DATA, handed over
// at now, that arrived at at (<= now): the end of its RTT samples.
func (c *conn) applyAck(now, at time.Duration, a *wire.Ack) {
	c.peerRate = a.Rate
	if a.Credit > c.snd.creditLimit || a.NumGrants() > 0 {
		c.blockAt = 0
	}
	c.snd.creditLimit = max(c.snd.creditLimit, a.Credit)
	c.snd.peerFinBase = max(c.snd.peerFinBase, a.FinBase)
	for i := range a.NumGrants() {
		c.snd.grant(a.Grant(i))
	}
	competing := c.competingPaths(a, now)
	end := now - c.ep.ownWait(at, now)
	blk := &c.ep.block
	for i := range a.NumBlocks() {
		p := c.blockPath(a, i)
		if p == nil {
			continue
		}
		before := p.state
		p.win.competing = 0
		if p.competingAt(now) {
			// At least itself: an earlier block of this ACK may have
			// made it compete (noteCompetitor) after the count.
			p.win.competing = max(competing, 1)
		}
		spurious := p.st.SpuriousTimeouts
		p.onBlock(blk, a.SentAt, now, at, end, c.cfg, &c.snd)
		if p.st.SpuriousTimeouts > spurious {
			c.shareLate(p, now)
		}
		if p.fell {
			p.fell = false
			c.startDrain(now)
		}
		c.notePath(p, before)
	}
	c.refreshFirstRTO()
}

// blockPath decodes ACK block i of a into c.ep.block and returns the path
// it is for, or nil if the connection has no such path.
func (c *conn) blockPath(a *wire.Ack, i int) *path {
	a.Block(i, &c.ep.block)
	if int(c.ep.block.Path) >= len(c.paths) {
		return nil
	}
	return c.paths[c.ep.block.Path]
}
