package metaroce

// EventKind says what an Event reports.
type EventKind uint8

// Event kinds.
const (
	// EventConnected: a connection this side opened with Connect is set up.
	EventConnected EventKind = iota + 1
	// EventAccepted: a peer opened a connection to this endpoint; Peer is
	// its node id.
	EventAccepted
	// EventSendDone: the peer acknowledged every byte of the message
	// (Stream, Msg), or it failed (Err). The send buffer is free again.
	EventSendDone
	// EventRecvDone: the message (Stream, Msg) arrived whole in the posted
	// buffer (N bytes), or the receive failed (Err, for example
	// ErrTruncated).
	EventRecvDone
	// EventClosed: the connection is gone (Err says why); every operation
	// on it failed before this event with its own event.
	EventClosed
	// EventPathState: path Path of the connection changed to State.
	EventPathState
	// EventUnexpected: message (Stream, Msg) of N bytes started to arrive
	// with no receive posted for it; the core holds its pieces (within
	// Config.UnexpectedBytes) until a receive with its key is posted. Only
	// with Config.ReportUnexpected. A driver that knows the message is not
	// wanted posts a receive with an empty buffer, which discards it.
	EventUnexpected
)

func (k EventKind) String() string {
	switch k {
	case EventConnected:
		return "connected"
	case EventAccepted:
		return "accepted"
	case EventSendDone:
		return "send-done"
	case EventRecvDone:
		return "recv-done"
	case EventClosed:
		return "closed"
	case EventPathState:
		return "path-state"
	case EventUnexpected:
		return "unexpected"
	}
	return "unknown"
}

// Event is one thing that happened, returned by Endpoint.PollEvent. Which
// fields are set depends on Kind.
type Event struct {
	Kind   EventKind
	Conn   ConnID
	Peer   uint64 // the peer's node id
	Stream uint64
	Msg    uint64
	N      int   // bytes received, for EventRecvDone
	Err    error // nil on success
	Path   int
	State  PathState
}
