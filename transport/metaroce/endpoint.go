package metaroce

import (
	"errors"
	"slices"
	"time"

	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// Endpoint is one node's MetaRoCE state: its connections, their paths and
// messages. It is a pure state machine: it never reads a clock, starts a
// goroutine or touches a socket. The driver feeds it datagrams and the time
// and polls it for datagrams to send, timers and events:
//
//   - after HandleDatagram, HandleTimeout, Connect, Send, PostRecv, a
//     cancel or Close, call PollTransmit until it returns false and
//     PollEvent until it returns false;
//   - call HandleTimeout at the time NextTimeout returns (or later).
//
// All times are time.Duration values since an epoch the driver chooses,
// and must never go backwards. An Endpoint is not safe for concurrent use.
type Endpoint struct {
	cfg    Config
	conns  map[ConnID]*conn
	order  []*conn // connections in creation order, for fair polling
	cursor int
	nextID uint64
	late   lateTimer // the earliest timer the driver was given (late.go)
	// budgetGrown is what the open connections' unexpected budgets grew
	// above UnexpectedBytes, together (growBudget): at most
	// UnexpectedMax - UnexpectedBytes.
	budgetGrown uint64

	accepted map[acceptKey]*conn // HELLOs seen, for resends
	closes   []pendingClose      // CLOSE packets to send for removed connections
	refusals []pendingClose      // CLOSEs refusing HELLOs, for PollRefusal
	events   []Event
	evHead   int

	nActive int     // connections counted in the rate share
	drain   float64 // part of the capacity withheld to drain a standing queue
	arrived int64   // DATA datagram bytes accepted, ever
	// arrivedAt is arrived at the last recount; measured is the capacity
	// measured when RecvCapacity is 0.
	arrivedAt, measured int64
	recount             time.Duration
	st                  EndpointStats
	data                wire.Data // scratch, so that parsing does not allocate
	ack                 wire.Ack
	block               wire.AckBlock
	blocks              []wire.AckBlock
	grants              []uint64
	// gatherMin is PollTransmitVec's minGather during the call (0 in
	// PollTransmit); gathered is the payload the polled DATA left out.
	gatherMin int
	gathered  []byte
	ackBuf    []byte // a piggybacked ACK, before it is copied into the DATA
	// helloKey is the key HELLO proofs are made with (keyed endpoints);
	// helloBuf scratch for them.
	helloKey, helloBuf []byte
	// remnants are the ended connections kept for their whole unreceived
	// messages and final counters (remnant.go), oldest first in
	// remnantOrder.
	remnants     map[ConnID]*remnant
	remnantOrder []ConnID
}

type acceptKey struct{ node, conn uint64 }

// pendingClose is a CLOSE to send for a removed connection, after its
// final ACK if ack is not nil.
type pendingClose struct {
	peer, conn uint64
	path       uint8
	code       uint32
	ack        []byte
	auth       *connAuth           // the connection's keys; nil for a refusal
	echo       [wire.NonceLen]byte // a refusal's nonce echo
}

// NewEndpoint returns an Endpoint with no connections, or an error if cfg
// has a field out of range.
func NewEndpoint(cfg Config) (*Endpoint, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Endpoint{
		cfg: cfg, conns: make(map[ConnID]*conn), accepted: make(map[acceptKey]*conn),
		nextID: cfg.IDSeed,
	}
	if e.keyed() {
		e.helloKey = cfg.Auth.Key.Derive(jobkey.PurposeMetaRoCE, []byte("hello"))
	}
	return e, nil
}

// Config returns the endpoint's configuration with defaults filled in.
func (e *Endpoint) Config() Config { return e.cfg }

// newID returns a fresh non-zero connection id (a splitmix64 sequence from
// IDSeed).
func (e *Endpoint) newID() ConnID {
	for {
		e.nextID += 0x9e3779b97f4a7c15
		z := e.nextID
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		if id := ConnID(z); id != 0 && e.conns[id] == nil && e.remnants[id] == nil {
			return id
		}
	}
}

func (e *Endpoint) addConn(c *conn) {
	if e.cfg.ReportUnexpected {
		c.rcv.arrived = func(m *inMsg) {
			e.emit(Event{Kind: EventUnexpected, Conn: c.id, Peer: c.peer, Stream: m.key.stream, Msg: m.key.msg, N: int(m.total)})
		}
	}
	e.conns[c.id] = c
	e.order = append(e.order, c)
	e.st.Conns = len(e.conns)
}

// Connect opens a connection to the peer with node id peer. Sends and
// receives may be posted at once; data flows once EventConnected arrives.
// The connection fails with ErrIdleTimeout if the peer does not answer
// within Config.IdleTimeout.
func (e *Endpoint) Connect(now time.Duration, peer uint64) (ConnID, error) {
	if len(e.conns) >= e.cfg.MaxConns {
		return 0, ErrLimit
	}
	nonce, err := e.newNonce()
	if err != nil {
		return 0, err
	}
	c := newConn(e, e.newID(), peer, true, now)
	c.nonce0, c.authMode = nonce, e.modeFor(peer)
	e.addConn(c)
	return c.id, nil
}

// conn returns a connection for an operation that may change its timers.
func (e *Endpoint) conn(id ConnID) (*conn, error) {
	if c := e.conns[id]; c != nil {
		c.timerOK = false
		return c, nil
	}
	return nil, ErrUnknownConn
}

// Send queues data as message (stream, msg) on the connection. data is
// borrowed until the EventSendDone for (stream, msg); the caller must not
// change it before. The key must not be in use by another message of the
// connection still in flight. A 0-byte message is allowed.
func (e *Endpoint) Send(now time.Duration, id ConnID, stream, msg uint64, data []byte) error {
	c, err := e.conn(id)
	if err != nil {
		if rm := e.remnants[id]; rm != nil {
			return rm.err
		}
		return err
	}
	c.startWait(now)
	if err := c.snd.send(msgKey{stream, msg}, data); err != nil {
		return err
	}
	if c.phase == phaseOpen {
		c.keepAt = min(c.keepAt, now+c.keepaliveEvery())
	}
	return nil
}

// PostRecv posts buf to receive message (stream, msg) from the peer of the
// connection. EventRecvDone reports the byte count when the whole message
// is in buf, or ErrTruncated if it is longer than buf. buf is borrowed
// until then (or until CancelRecv).
//
// On a connection that ended for a reason other than this side's Close,
// PostRecv takes the oldest whole message with the key that had arrived
// before the end and that no receive took: EventRecvDone follows as
// usual. Without such a message it returns the error that ended the
// connection (ErrPeerClosed, ErrPeerGone, ...).
func (e *Endpoint) PostRecv(now time.Duration, id ConnID, stream, msg uint64, buf []byte) error {
	c, err := e.conn(id)
	if err != nil {
		if rm := e.remnants[id]; rm != nil {
			return e.remnantRecv(id, rm, msgKey{stream, msg}, buf)
		}
		return err
	}
	c.startWait(now)
	if err := c.rcv.post(msgKey{stream, msg}, buf); err != nil {
		return err
	}
	if c.phase != phaseOpen {
		return nil
	}
	if c.rcv.creditLow() || c.rcv.owesGrants() {
		c.ackSoon(now, c.ackPath, AckCredit) // tell the sender about credit and grants
	}
	c.keepAt = min(c.keepAt, now+c.keepaliveEvery()) // probe a silent peer sooner
	return nil
}

// CancelSend withdraws a queued or in-flight send; no event follows for
// it. When it returns, the core no longer reads the buffer. A message that
// had started is aborted at the receiver, whose receive fails with
// ErrRemoteCancelled. It reports whether there was such a send.
func (e *Endpoint) CancelSend(now time.Duration, id ConnID, stream, msg uint64) bool {
	c, err := e.conn(id)
	return err == nil && c.snd.cancel(msgKey{stream, msg})
}

// CancelRecv withdraws a posted receive; no event follows for it. When it
// returns, the core no longer writes the buffer. It reports whether there
// was such a receive.
func (e *Endpoint) CancelRecv(now time.Duration, id ConnID, stream, msg uint64) bool {
	c, err := e.conn(id)
	return err == nil && c.rcv.cancel(msgKey{stream, msg})
}

// Close closes the connection: its pending operations fail with ErrClosed,
// the peer is sent a final ACK (if it sent any data) and a CLOSE on the
// same path, and EventClosed follows. The final ACK lets the peer complete
// the sends whose every piece arrived before it fails the rest.
//
// Close of a connection that has already ended (the peer closed it, or it
// failed) forgets what the endpoint kept of it: its whole messages not yet
// received and its counters (see PostRecv and ConnStats). No event follows.
func (e *Endpoint) Close(now time.Duration, id ConnID) error {
	c, err := e.conn(id)
	if err != nil {
		if e.release(id) {
			return nil
		}
		return err
	}
	e.fail(now, c, ErrClosed, true)
	return nil
}

// fail removes a connection after failing its operations with err;
// tellPeer queues a final ACK and a CLOSE.
func (e *Endpoint) fail(now time.Duration, c *conn, err error, tellPeer bool) {
	if tellPeer && c.phase == phaseOpen && len(e.closes) < e.cfg.MaxConns {
		code := uint32(wire.CloseNormal)
		if errors.Is(err, ErrIdleTimeout) || errors.Is(err, ErrPeerTimeout) {
			code = wire.CloseIdle
		}
		pc := pendingClose{peer: c.peer, conn: c.peerConn, path: uint8(c.ackRoute()), code: code, auth: c.auth}
		if c.receivedData() {
			for _, p := range c.paths {
				p.recv.repeat = max(p.recv.repeat, 1) // the last word: every path
			}
			pc.ack = slices.Clone(c.buildAck(now, make([]byte, 0, c.datagram), c.datagram))
		}
		e.closes = append(e.closes, pc)
	}
	var rm *remnant
	if err != ErrClosed && c.phase == phaseOpen {
		rm = keep(c, err)
	}
	c.snd.fail(err)
	c.rcv.fail(err)
	if rm != nil {
		e.seal(c, rm)
	}
	e.budgetGrown -= c.budgetGrown
	delete(e.conns, c.id)
	if !c.initiator {
		delete(e.accepted, c.accepted)
	}
	for i, o := range e.order {
		if o == c {
			e.order = append(e.order[:i], e.order[i+1:]...)
			break
		}
	}
	if c.active {
		e.nActive--
	}
	e.st.Conns = len(e.conns)
	e.emit(Event{Kind: EventClosed, Conn: c.id, Peer: c.peer, Err: err})
}

func (e *Endpoint) emit(ev Event) { e.events = append(e.events, ev) }

// PollEvent returns the next event, or false if there is none.
func (e *Endpoint) PollEvent() (Event, bool) {
	if e.evHead == len(e.events) {
		e.events, e.evHead = e.events[:0], 0
		return Event{}, false
	}
	ev := e.events[e.evHead]
	e.events[e.evHead] = Event{}
	e.evHead++
	return ev, true
}

// HandleTimeout runs every timer due at or before now.
func (e *Endpoint) HandleTimeout(now time.Duration) {
	e.catchUp(now)
	for i := 0; i < len(e.order); i++ {
		c := e.order[i]
		if c.timerOK && c.timer > now {
			continue
		}
		c.timerOK = false
		if err := c.onTimeout(now); err != nil {
			e.fail(now, c, err, err != ErrPeerGone) // a CLOSE cannot reach a closed port (one silent for PeerTimeout may hear it)
			i--
		}
	}
}

// NextTimeout returns the earliest time at which HandleTimeout has work,
// or false if there is none.
func (e *Endpoint) NextTimeout() (time.Duration, bool) {
	var t time.Duration
	ok := false
	for _, c := range e.order {
		if !c.timerOK {
			c.timer, c.timerOK = c.nextTimeout(), true
		}
		if !ok || c.timer < t {
			t, ok = c.timer, true
		}
	}
	e.noteDue(t, ok)
	return t, ok
}

// Stats returns the endpoint's drop counters.
func (e *Endpoint) Stats() EndpointStats { return e.st }

// ConnStats returns a connection's counters and appends its paths' to
// paths, or false for an unknown connection. A connection that ended for a
// reason other than this side's Close keeps its final counters (not
// Established, nothing pending or in flight; UnexpectedBytes the whole
// messages still receivable) until Close forgets it, or until
// Config.MaxConns more such connections have ended.
func (e *Endpoint) ConnStats(id ConnID, paths []PathStats) (ConnStats, []PathStats, bool) {
	c := e.conns[id]
	if c == nil {
		if rm := e.remnants[id]; rm != nil {
			return rm.st, append(paths, rm.paths...), true
		}
		return ConnStats{}, paths, false
	}
	s := c.st
	s.PendingSends, s.PostedRecvs = c.snd.count, len(c.rcv.posted)
	s.UnexpectedBytes, s.Budget = int64(c.rcv.held), int64(c.rcv.budget)
	s.PeerRate, s.Discarded = int64(c.peerRate), c.rcv.discarded
	s.BytesArrived = c.rcv.placed
	s.Credit = int64(c.snd.creditLimit - c.snd.creditUsed)
	s.RetransmitQueue = c.snd.queuedResends()
	s.Auth = c.authMode
	for _, p := range c.paths {
		paths = append(paths, p.stats())
	}
	return s, paths, true
}

// Conns returns the ids of the open connections, oldest first.
func (e *Endpoint) Conns() []ConnID {
	ids := make([]ConnID, len(e.order))
	for i, c := range e.order {
		ids[i] = c.id
	}
	return ids
}

// growBudget lets c's receiver grow its unexpected budget
// (receiver.growBudget) by what the endpoint's connections have not
// already grown, together, of UnexpectedMax - UnexpectedBytes: so one
// connection may reach UnexpectedMax, and many share that growth, which
// bounds the unexpected bytes the endpoint holds at MaxConns x
// UnexpectedBytes + UnexpectedMax, not MaxConns x UnexpectedMax.
func (e *Endpoint) growBudget(now time.Duration, c *conn) {
	pool := uint64(e.cfg.UnexpectedMax - e.cfg.UnexpectedBytes)
	grew := c.rcv.growBudget(now, c.minSRTT(), pool-min(pool, e.budgetGrown))
	c.budgetGrown += grew
	e.budgetGrown += grew
}
