package metaroce

import (
	"cmp"
	"slices"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// inMsg is a message being received.
type inMsg struct {
	key     msgKey
	seq     uint64
	total   uint64
	buf     []byte            // the posted buffer, once matched
	matched bool              // a receive was posted for it
	discard bool              // its bytes are dropped (truncated or cancelled)
	got     pieceSet          // pieces received, once matched
	held    map[uint64][]byte // pieces received before the match, by index
	heldN   uint64            // bytes in held

	counted  uint64 // unconfirmed bytes received (each piece once)
	released uint64 // of those, bytes given back as credit
	owed     bool   // a grant is owed to the sender
	grantAt  time.Duration
	sameKey  *inMsg // next unexpected message with the same key
}

func (m *inMsg) pieces(chunk uint64) uint64 { return max(1, (m.total+chunk-1)/chunk) }

// receiver is the receiving half of a connection's message layer: posted
// receives, unexpected messages, placement, credit and grants.
type receiver struct {
	chunk      uint64
	budget     uint64 // unexpected bytes held at most; grows (growBudget)
	maxBudget  uint64 // what budget grows to at most
	landed     uint64 // unconfirmed bytes placed in posted receives since landedAt
	landedAt   time.Duration
	maxRecvs   int
	window     uint64
	posted     map[msgKey][]byte // receives not yet matched
	postedBig  int               // of those, buffers of placeable messages (bigMessage)
	matchedBig int               // matched messages of bigMessage length
	active     map[uint64]*inMsg // by MsgSeq
	matched    map[msgKey]*inMsg // matched and unfinished, for cancel
	unexpected map[msgKey]*inMsg // first of a chain of unmatched messages

	finBase uint64   // lowest MsgSeq not finished
	fin     []uint64 // finished bits for MsgSeq finBase.., indexed MsgSeq mod window

	held       uint64   // unexpected bytes held
	released   uint64   // unconfirmed bytes given back as credit, ever
	advertised uint64   // released as of the last ACK sent
	counted    uint64   // unconfirmed bytes received, ever (each piece once)
	grants     []uint64 // MsgSeqs that may be owed a grant

	discarded int64
	placed    int64 // message bytes received for the first time
	// whole counts the messages whose last missing piece has arrived
	// (matched or not): the arrival that raises it lets the sender's
	// send complete once acknowledged (conn.acceptData).
	whole   uint64
	done    func(m *inMsg, n int, err error)
	arrived func(m *inMsg) // reports an unexpected message; may be nil
}

func newReceiver(chunk int, budget, maxBudget uint64, maxRecvs, window int, done func(*inMsg, int, error)) receiver {
	return receiver{
		chunk: uint64(chunk), budget: budget, maxBudget: max(budget, maxBudget), maxRecvs: maxRecvs, window: uint64(window), done: done,
		posted: make(map[msgKey][]byte), active: make(map[uint64]*inMsg),
		matched: make(map[msgKey]*inMsg), unexpected: make(map[msgKey]*inMsg),
		fin: make([]uint64, (window+63)/64),
	}
}

// waiting reports whether a receive is posted and not finished.
func (r *receiver) waiting() bool { return len(r.posted) > 0 || len(r.matched) > 0 }

// credit is the total of unconfirmed bytes the sender may have sent.
func (r *receiver) credit() uint64 { return r.budget + r.released }

// growBudget raises the budget, once per round trip rtt, to twice the
// unconfirmed bytes that landed in posted receives within it, at most
// maxBudget and at most room more than now, when they were more than half
// of it and nothing unexpected is held: the sender was held to the budget
// while the receives were posted (a bandwidth-delay product above it), so
// the larger budget carries data that has a place, not held data. It
// never shrinks. It returns by how much the budget grew.
func (r *receiver) growBudget(now, rtt time.Duration, room uint64) uint64 {
	if now-r.landedAt < rtt {
		return 0
	}
	var grew uint64
	if r.held == 0 && 2*r.landed > r.budget {
		to := min(r.maxBudget, 2*r.landed, r.budget+room)
		grew = to - min(to, r.budget)
		r.budget += grew
	}
	r.landed, r.landedAt = 0, now
	return grew
}

// creditLow reports whether the sender may be short of credit: the credit
// this side last advertised, less the unconfirmed bytes received, is below
// half the budget, and more has been released since. Credit released while
// the sender still has plenty travels in the next ACK that is sent anyway;
// a sender that runs out with nothing in flight probes for it.
func (r *receiver) creditLow() bool {
	return r.released > r.advertised && r.budget+r.advertised < r.counted+r.budget/2
}

func (r *receiver) finished(seq uint64) bool {
	if seq < r.finBase {
		return true
	}
	i := seq % r.window
	return r.fin[i/64]&(1<<(i%64)) != 0
}

// piece handles one DATA packet. It returns false if the packet must not be
// acknowledged: beyond the message window or budget, or inconsistent with
// what is known of its message.
func (r *receiver) piece(d *wire.Data, now time.Duration) bool {
	s := d.MsgSeq
	if r.finished(s) {
		return true // a late copy of a finished message
	}
	if s >= r.finBase+r.window {
		r.discarded++
		return false
	}
	m := r.active[s]
	if m == nil {
		m = r.open(d)
	}
	if d.Total != m.total {
		r.discarded++
		return false
	}
	switch {
	case d.Flags&wire.FlagAbort != 0:
		r.abort(m, d.Offset)
		return true
	case d.Flags&wire.FlagAnnounce != 0:
		if m.matched {
			r.owe(m)
		}
		return true
	}
	return r.data(m, d)
}

// data places or holds one piece of payload.
func (r *receiver) data(m *inMsg, d *wire.Data) bool {
	n := uint64(len(d.Payload))
	if !r.wholePiece(m, d.Offset, n) {
		r.discarded++
		return false
	}
	idx := d.Offset / r.chunk
	unconf := d.Flags&wire.FlagUnconfirmed != 0
	if !m.matched {
		if _, dup := m.held[idx]; dup {
			return true
		}
		if !unconf || r.held+n > r.budget {
			r.discarded++
			return false
		}
		if m.held == nil {
			m.held = make(map[uint64][]byte)
		}
		m.held[idx] = append([]byte(nil), d.Payload...)
		if uint64(len(m.held)) == m.pieces(r.chunk) {
			r.whole++
		}
		r.placed += int64(n)
		m.heldN += n
		r.held += n
		m.counted += n
		r.counted += n
		return true
	}
	if !m.got.add(idx) {
		return true
	}
	if m.got.n == m.pieces(r.chunk) {
		r.whole++
	}
	r.placed += int64(n)
	if !m.discard && !inPlace(m.buf[d.Offset:], d.Payload) {
		copy(m.buf[d.Offset:], d.Payload)
	}
	if unconf {
		m.counted += n
		r.counted += n
		r.landed += n
		r.release(m, n)
		r.owe(m)
	} else {
		m.owed = false
	}
	r.maybeComplete(m)
	return true
}

// wholePiece reports whether n bytes at offset are one whole piece of m:
// pieces are whole chunks (the last may be shorter), and only a 0-byte
// message has an empty one.
func (r *receiver) wholePiece(m *inMsg, offset, n uint64) bool {
	return offset <= m.total && offset%r.chunk == 0 && n == min(r.chunk, m.total-offset) && (n != 0 || m.total == 0)
}

// inPlace reports whether payload already starts at dst[0] (it was read
// into place; see Endpoint.Placement).
func inPlace(dst, payload []byte) bool {
	return len(dst) > 0 && len(payload) > 0 && &dst[0] == &payload[0]
}

// placement returns where in a posted buffer the payload of the piece d
// describes, n bytes long, belongs: only for a piece of a matched message
// that has not arrived yet and is consistent with what is known of the
// message; nil otherwise.
func (r *receiver) placement(d *wire.Data, n int) []byte {
	if n == 0 || d.Flags&(wire.FlagAnnounce|wire.FlagAbort) != 0 || r.finished(d.MsgSeq) {
		return nil
	}
	m := r.active[d.MsgSeq]
	if m == nil || !m.matched || m.discard || d.Total != m.total ||
		!r.wholePiece(m, d.Offset, uint64(n)) || m.got.has(d.Offset/r.chunk) {
		return nil
	}
	return m.buf[d.Offset : d.Offset+uint64(n)]
}

// open starts the record of a message seen for the first time, matching it
// to a posted receive if there is one.
func (r *receiver) open(d *wire.Data) *inMsg {
	m := &inMsg{key: msgKey{d.Stream, d.Msg}, seq: d.MsgSeq, total: d.Total}
	r.active[m.seq] = m
	if buf, ok := r.posted[m.key]; ok {
		r.unpost(m.key)
		r.match(m, buf)
		return m
	}
	if head := r.unexpected[m.key]; head != nil {
		for head.sameKey != nil {
			head = head.sameKey
		}
		head.sameKey = m
	} else {
		r.unexpected[m.key] = m
	}
	if r.arrived != nil {
		r.arrived(m)
	}
	return m
}

// match binds m to a posted buffer, moving any held pieces into it.
func (r *receiver) match(m *inMsg, buf []byte) {
	m.matched = true
	r.matched[m.key] = m
	if r.bigMessage(m.total) {
		r.matchedBig++
	}
	if m.total > uint64(len(buf)) {
		m.discard = true
		r.done(m, 0, ErrTruncated)
	} else {
		m.buf = buf[:m.total]
	}
	for idx, p := range m.held {
		m.got.add(idx)
		if !m.discard {
			copy(m.buf[idx*r.chunk:], p)
		}
	}
	r.held -= m.heldN
	r.release(m, m.heldN)
	m.held, m.heldN = nil, 0
	r.owe(m)
	r.maybeComplete(m)
}

func (r *receiver) release(m *inMsg, n uint64) {
	m.released += n
	r.released += n
}

func (r *receiver) owe(m *inMsg) {
	if !m.owed {
		m.owed = true
		r.grants = append(r.grants, m.seq)
	}
}

func (r *receiver) maybeComplete(m *inMsg) {
	want := m.pieces(r.chunk)
	if m.got.n < want {
		return
	}
	if len(m.got.runs) != 1 || m.got.runs[0] != (pieceRun{0, want}) {
		// Every piece index was checked to be below want on arrival.
		panic("metaroce: a message completed with pieces outside it")
	}
	if !m.discard {
		r.done(m, int(m.total), nil)
	}
	r.finish(m)
}

// abort ends a message its sender cancelled; unconfSent is the unconfirmed
// bytes the sender counted for it, all of which become credit again.
func (r *receiver) abort(m *inMsg, unconfSent uint64) {
	if m.matched && !m.discard {
		r.done(m, 0, ErrRemoteCancelled)
	}
	r.held -= m.heldN
	if unconfSent > m.released {
		r.release(m, unconfSent-m.released)
	}
	r.finish(m)
}

// finish forgets m and marks its MsgSeq finished.
func (r *receiver) finish(m *inMsg) {
	delete(r.active, m.seq)
	if r.matched[m.key] == m {
		r.unmatch(m)
	}
	if !m.matched {
		r.unlinkUnexpected(m)
	}
	m.owed, m.held, m.heldN = false, nil, 0
	i := m.seq % r.window
	r.fin[i/64] |= 1 << (i % 64)
	for {
		j := r.finBase % r.window
		if r.fin[j/64]&(1<<(j%64)) == 0 {
			break
		}
		r.fin[j/64] &^= 1 << (j % 64)
		r.finBase++
	}
}

func (r *receiver) unlinkUnexpected(m *inMsg) {
	head := r.unexpected[m.key]
	if head == m {
		if m.sameKey != nil {
			r.unexpected[m.key] = m.sameKey
		} else {
			delete(r.unexpected, m.key)
		}
		return
	}
	for p := head; p != nil; p = p.sameKey {
		if p.sameKey == m {
			p.sameKey = m.sameKey
			return
		}
	}
}

// post posts a receive, matching an unexpected message if one waits.
func (r *receiver) post(k msgKey, buf []byte) error {
	if _, dup := r.posted[k]; dup || r.matched[k] != nil {
		return ErrDuplicate
	}
	if m := r.unexpected[k]; m != nil {
		r.unlinkUnexpected(m)
		m.sameKey = nil
		r.match(m, buf)
		return nil
	}
	if len(r.posted) >= r.maxRecvs {
		return ErrLimit
	}
	r.posted[k] = buf
	if r.bigMessage(uint64(len(buf))) {
		r.postedBig++
	}
	return nil
}

// bigMessage reports whether a message of total bytes has a piece a
// driver can read into place (Endpoint.Placement): a full one after the
// first, which opens the message and is never placed.
func (r *receiver) bigMessage(total uint64) bool { return total >= 2*r.chunk }

// unmatch takes matched message m out of matched.
func (r *receiver) unmatch(m *inMsg) {
	if r.bigMessage(m.total) {
		r.matchedBig--
	}
	delete(r.matched, m.key)
}

// unpost removes posted receive k.
func (r *receiver) unpost(k msgKey) {
	if r.bigMessage(uint64(len(r.posted[k]))) {
		r.postedBig--
	}
	delete(r.posted, k)
}

// cancel withdraws a posted receive; a message already matched to it is
// received on and dropped.
func (r *receiver) cancel(k msgKey) bool {
	if _, ok := r.posted[k]; ok {
		r.unpost(k)
		return true
	}
	m := r.matched[k]
	if m == nil || m.discard {
		return false
	}
	m.discard, m.buf = true, nil
	r.unmatch(m)
	return true
}

// owesGrants reports whether a grant is owed, forgetting those no longer
// owed (their message finished: a grant would tell the sender nothing).
func (r *receiver) owesGrants() bool {
	keep := r.grants[:0]
	for _, seq := range r.grants {
		if m := r.active[seq]; m != nil && m.owed {
			keep = append(keep, seq)
		}
	}
	clear(r.grants[len(keep):])
	r.grants = keep
	return len(keep) > 0
}

// takeGrants appends to dst the grants owed and not sent within resend,
// up to max of them, and forgets grants no longer owed.
func (r *receiver) takeGrants(dst []uint64, now, resend time.Duration, limit int) []uint64 {
	keep := r.grants[:0]
	for _, seq := range r.grants {
		m := r.active[seq]
		if m == nil || !m.owed {
			continue
		}
		keep = append(keep, seq)
		if len(dst) < limit && (m.grantAt == 0 || now-m.grantAt >= resend) {
			m.grantAt = now
			dst = append(dst, seq)
		}
	}
	r.grants = keep
	return dst
}

// fail ends every posted and matched receive with err.
func (r *receiver) fail(err error) {
	keys := make([]msgKey, 0, len(r.posted))
	for k := range r.posted {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b msgKey) int {
		return cmp.Or(cmp.Compare(a.stream, b.stream), cmp.Compare(a.msg, b.msg))
	})
	for _, k := range keys {
		r.done(&inMsg{key: k}, 0, err)
	}
	ms := make([]*inMsg, 0, len(r.matched))
	for _, m := range r.matched {
		if !m.discard {
			ms = append(ms, m)
		}
	}
	slices.SortFunc(ms, func(a, b *inMsg) int { return cmp.Compare(a.seq, b.seq) })
	for _, m := range ms {
		r.done(m, 0, err)
	}
	clear(r.posted)
	r.postedBig, r.matchedBig = 0, 0
	clear(r.matched)
	clear(r.active)
	clear(r.unexpected)
}
