package metaroce

import (
	"cmp"
	"slices"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// msgKey is the match key of a message.
type msgKey struct{ stream, msg uint64 }

// outMsg is a message being sent.
type outMsg struct {
	key     msgKey
	seq     uint64 // MsgSeq on the wire, assigned when the message starts
	data    []byte // borrowed from the caller until done or cancelled
	size    uint64 // len(data) at send time
	next    uint64 // next offset sent for the first time
	allSent bool   // every piece was sent once
	started bool   // some piece (or an announce) was sent
	granted bool   // the receiver matched it to a posted buffer
	aborted bool   // cancelled after it started
	unconf  uint64 // unconfirmed bytes sent (counted against credit)
	pending int    // pieces in flight or waiting to be resent
}

func (m *outMsg) total() uint64 { return m.size }

// piece is one DATA packet's worth of a message, before a path and a
// sequence number are chosen.
type piece struct {
	msgSeq uint64
	offset uint64
	length int32
	flags  uint8
	gone   bool // a resend taken back: its original was acknowledged late (lateack.go)
}

// sender is the sending half of a connection's message layer: the message
// queue, pieces to resend, and credit.
type sender struct {
	chunk    int
	maxSends int
	msgs     map[uint64]*outMsg // started messages, by MsgSeq
	byKey    map[msgKey]*outMsg // messages not cancelled, by key
	count    int                // messages queued or in flight (MaxSends)
	order    []*outMsg          // messages not all sent, in MsgSeq order
	nextSeq  uint64
	rtx      []piece // pieces to resend, oldest first
	rtxHead  int

	creditUsed, creditLimit uint64
	peerFinBase, peerWindow uint64

	done func(m *outMsg, err error) // reports a finished send
}

func newSender(chunk, maxSends int, credit, peerWindow uint64, done func(*outMsg, error)) sender {
	return sender{
		chunk: chunk, maxSends: maxSends, creditLimit: credit, peerWindow: peerWindow, done: done,
		msgs: make(map[uint64]*outMsg), byKey: make(map[msgKey]*outMsg),
	}
}

// send queues a message.
func (s *sender) send(k msgKey, data []byte) error {
	switch {
	case s.count >= s.maxSends:
		return ErrLimit
	case uint64(len(data)) > wire.MaxMessageLen:
		return ErrTooLong
	case s.byKey[k] != nil:
		return ErrDuplicate
	}
	m := &outMsg{key: k, data: data, size: uint64(len(data))}
	s.byKey[k] = m
	s.count++
	s.order = append(s.order, m)
	return nil
}

// cancel withdraws a message. One that never left is forgotten; one that
// started is aborted: the receiver is told and no piece is resent.
func (s *sender) cancel(k msgKey) bool {
	m := s.byKey[k]
	if m == nil || m.aborted {
		return false
	}
	delete(s.byKey, k)
	m.data, m.aborted = nil, true
	if !m.started {
		s.count-- // it never had a MsgSeq: the receiver's window has no hole
		return true
	}
	m.pending++
	s.rtx = append(s.rtx, piece{msgSeq: m.seq, offset: m.unconf, flags: wire.FlagAbort})
	return true
}

// nextPiece returns the next piece to send: a resend first, then new data
// from the oldest message that may send. It reports false if none may go.
func (s *sender) nextPiece() (piece, bool) {
	for s.rtxHead < len(s.rtx) {
		pc := s.rtx[s.rtxHead]
		s.rtxHead++
		if s.rtxHead == len(s.rtx) {
			s.rtx, s.rtxHead = s.rtx[:0], 0
		}
		m := s.msgs[pc.msgSeq]
		if m == nil || pc.gone {
			continue
		}
		if m.aborted && pc.flags&wire.FlagAbort == 0 {
			s.settle(m)
			continue
		}
		if pc.flags&wire.FlagAbort == 0 {
			pc.flags |= wire.FlagRetransmit
		}
		return pc, true
	}
	s.trimOrder()
	return s.newPiece()
}

// trimOrder drops finished messages from the front of the order.
func (s *sender) trimOrder() {
	i := 0
	for i < len(s.order) && (s.order[i].allSent || s.order[i].aborted) {
		s.order[i] = nil
		i++
	}
	if i > 0 {
		s.order = s.order[i:]
	}
}

// newPiece cuts the next first-time piece of the oldest message that may
// send: granted, within credit, or not yet announced.
func (s *sender) newPiece() (piece, bool) {
	for _, m := range s.order {
		if m.allSent || m.aborted {
			continue
		}
		if !m.started && s.nextSeq >= s.peerFinBase+s.peerWindow {
			break // messages start in order, so later ones wait too
		}
		total := m.size
		n := min(uint64(s.chunk), total-m.next)
		pc := piece{msgSeq: m.seq, offset: m.next, length: int32(n)}
		switch {
		case m.granted:
		case s.creditUsed+n <= s.creditLimit:
			pc.flags |= wire.FlagUnconfirmed
			s.creditUsed += n
			m.unconf += n
		case !m.started:
			s.start(m)
			m.pending++
			return piece{msgSeq: m.seq, flags: wire.FlagAnnounce}, true
		default:
			continue
		}
		if m.next == 0 {
			pc.flags |= wire.FlagFirst
		}
		m.next += n
		if m.next == total {
			pc.flags |= wire.FlagLast
			m.allSent = true
		}
		if !m.started {
			s.start(m)
			pc.msgSeq = m.seq
		}
		m.pending++
		return pc, true
	}
	return piece{}, false
}

// start gives m the next MsgSeq.
func (s *sender) start(m *outMsg) {
	m.started, m.seq = true, s.nextSeq
	s.nextSeq++
	s.msgs[m.seq] = m
}

// blocked reports, when nextPiece found nothing to send, whether some
// message is held back anyway: by a grant, by credit, or by the message
// window. Each waits for news that only the peer's ACKs bring, so a
// blocked sender with nothing in flight must ask with a probe.
func (s *sender) blocked() bool {
	for _, m := range s.order {
		if !m.allSent && !m.aborted {
			return true
		}
	}
	return false
}

// queuedResends is the number of pieces waiting to be resent: those in
// the resend queue but the ones a late ACK took back (piece.gone), which
// nextPiece skips.
func (s *sender) queuedResends() int {
	n := 0
	for _, pc := range s.rtx[s.rtxHead:] {
		if !pc.gone {
			n++
		}
	}
	return n
}

// hasWork reports whether nextPiece might return something.
func (s *sender) hasWork() bool {
	return s.rtxHead < len(s.rtx) || len(s.order) > 0
}

func (s *sender) packetAcked(rec *sentPacket) {
	if m := s.msgs[rec.msgSeq]; m != nil {
		s.settle(m)
	}
}

func (s *sender) packetLost(rec *sentPacket) {
	m := s.msgs[rec.msgSeq]
	if m == nil {
		return
	}
	if m.aborted && rec.flags&wire.FlagAbort == 0 {
		s.settle(m)
		return
	}
	flags := rec.flags &^ wire.FlagRetransmit
	s.rtx = append(s.rtx, piece{msgSeq: rec.msgSeq, offset: rec.offset, length: rec.length, flags: flags})
}

// settle counts one piece of m as finished and completes m when none is
// left.
func (s *sender) settle(m *outMsg) {
	m.pending--
	if m.pending > 0 || (!m.allSent && !m.aborted) {
		return
	}
	delete(s.msgs, m.seq)
	s.count--
	if m.aborted {
		return
	}
	delete(s.byKey, m.key)
	s.done(m, nil)
}

// grant marks a message as matched by the receiver.
func (s *sender) grant(seq uint64) {
	if m := s.msgs[seq]; m != nil {
		m.granted = true
	}
}

// fail ends every message with err: started ones in MsgSeq order, then
// the others in the order they were sent.
func (s *sender) fail(err error) {
	ms := make([]*outMsg, 0, len(s.msgs))
	for _, m := range s.msgs {
		if !m.aborted {
			ms = append(ms, m)
		}
	}
	slices.SortFunc(ms, func(a, b *outMsg) int { return cmp.Compare(a.seq, b.seq) })
	for _, m := range s.order {
		if !m.started && !m.aborted {
			ms = append(ms, m)
		}
	}
	clear(s.msgs)
	clear(s.byKey)
	s.order, s.rtx, s.rtxHead, s.count = nil, nil, 0, 0
	for _, m := range ms {
		s.done(m, err)
	}
}
