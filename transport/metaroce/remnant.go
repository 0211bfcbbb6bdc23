package metaroce

import (
	"cmp"
	"slices"
)

// remnant is what an Endpoint keeps of an open connection that ended for a
// reason other than this side's Close (the peer's CLOSE, ErrPeerGone, a
// timeout): the whole messages the peer sent that no receive had taken,
// deliverable to receives posted after the end, and the connection's final
// counters. Bounded: its messages are bytes the connection held within
// Config.UnexpectedBytes; an Endpoint keeps at most Config.MaxConns
// remnants, forgetting the oldest first, and at most Config.RemnantBytes
// of their messages (EndpointStats.RemnantBytes), forgetting the oldest
// remnants' messages first (the remnant stays, with its counters and its
// error).
type remnant struct {
	peer  uint64
	err   error // why the connection ended; refuses what the remnant cannot serve
	st    ConnStats
	paths []PathStats
	msgs  map[msgKey][][]byte // whole messages by key, oldest first
}

// keep returns the remnant of c, which is failing with err, with the whole
// messages c's receiver holds; the caller calls it before the receiver's
// state is cleared, and seal once c's operations have failed.
func keep(c *conn, err error) *remnant {
	rm := &remnant{peer: c.peer, err: err, msgs: make(map[msgKey][][]byte)}
	held := int64(0)
	ms := make([]*inMsg, 0, len(c.rcv.unexpected))
	for _, m := range c.rcv.unexpected {
		for ; m != nil; m = m.sameKey {
			ms = append(ms, m)
		}
	}
	slices.SortFunc(ms, func(a, b *inMsg) int { return cmp.Compare(a.seq, b.seq) })
	for _, m := range ms {
		if uint64(len(m.held)) != m.pieces(c.rcv.chunk) {
			continue // a partly received message is lost with the connection
		}
		data := make([]byte, m.total)
		for idx, p := range m.held {
			copy(data[idx*c.rcv.chunk:], p)
		}
		rm.msgs[m.key] = append(rm.msgs[m.key], data)
		held += int64(m.total)
	}
	rm.st.UnexpectedBytes = held
	return rm
}

// seal takes c's final counters into rm and keeps rm under c's id. The
// caller calls it while c is still among the connections.
func (e *Endpoint) seal(c *conn, rm *remnant) {
	held := rm.st.UnexpectedBytes
	rm.st, rm.paths, _ = e.ConnStats(c.id, nil)
	rm.st.Established, rm.st.PendingSends, rm.st.PostedRecvs = false, 0, 0
	rm.st.UnexpectedBytes, rm.st.Credit, rm.st.RetransmitQueue = held, 0, 0
	for i := range rm.paths {
		rm.paths[i].Inflight = 0
	}
	if e.remnants == nil {
		e.remnants = make(map[ConnID]*remnant)
	}
	for len(e.remnantOrder) >= e.cfg.MaxConns {
		e.st.RemnantBytes -= e.remnants[e.remnantOrder[0]].st.UnexpectedBytes
		delete(e.remnants, e.remnantOrder[0])
		e.remnantOrder = e.remnantOrder[1:]
	}
	e.remnants[c.id] = rm
	e.remnantOrder = append(e.remnantOrder, c.id)
	e.st.RemnantBytes += held
	for _, id := range e.remnantOrder {
		if e.st.RemnantBytes <= e.cfg.RemnantBytes {
			break
		}
		e.forgetMessages(e.remnants[id])
	}
}

// forgetMessages drops rm's kept messages for Config.RemnantBytes: later
// receives on its connection fail with the error that ended it.
func (e *Endpoint) forgetMessages(rm *remnant) {
	n := rm.st.UnexpectedBytes
	rm.msgs, rm.st.UnexpectedBytes = nil, 0
	e.st.RemnantBytes -= n
	e.st.RemnantDropped += n
}

// remnantRecv serves PostRecv on an ended connection: the oldest whole
// message with key k, if the remnant has one, completes the receive with
// EventRecvDone (ErrTruncated if longer than buf); otherwise the receive
// is refused with the error that ended the connection.
func (e *Endpoint) remnantRecv(id ConnID, rm *remnant, k msgKey, buf []byte) error {
	q := rm.msgs[k]
	if len(q) == 0 {
		return rm.err
	}
	data := q[0]
	q[0] = nil
	if len(q) == 1 {
		delete(rm.msgs, k)
	} else {
		rm.msgs[k] = q[1:]
	}
	rm.st.UnexpectedBytes -= int64(len(data))
	e.st.RemnantBytes -= int64(len(data))
	ev := Event{Kind: EventRecvDone, Conn: id, Peer: rm.peer, Stream: k.stream, Msg: k.msg}
	if len(data) > len(buf) {
		ev.Err = ErrTruncated
	} else {
		ev.N = copy(buf, data)
		rm.st.MsgsRecv++
		rm.st.BytesRecv += int64(len(data))
	}
	e.emit(ev)
	return nil
}

// release forgets the remnant of connection id; it reports whether there
// was one.
func (e *Endpoint) release(id ConnID) bool {
	rm := e.remnants[id]
	if rm == nil {
		return false
	}
	e.st.RemnantBytes -= rm.st.UnexpectedBytes
	delete(e.remnants, id)
	for i, o := range e.remnantOrder {
		if o == id {
			e.remnantOrder = append(e.remnantOrder[:i], e.remnantOrder[i+1:]...)
			break
		}
	}
	return true
}
