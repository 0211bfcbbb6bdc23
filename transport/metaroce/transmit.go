package metaroce

// What the endpoint sends: PollTransmit's datagrams, the connections
// taking turns.

import (
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// Transmit describes a datagram returned by PollTransmit.
type Transmit struct {
	Conn ConnID // the connection it belongs to (0 for a CLOSE of a removed one)
	Peer uint64 // the peer's node id
	// Path is the path index: send from this endpoint's socket Path to the
	// peer's socket Path.
	Path int
	N    int // datagram length, at the start of the buffer
	// Payload, set only by PollTransmitVec, is a DATA payload left out of
	// the buffer: the datagram is then buf[:N], Payload, and buf[N:N+Tail]
	// (a piggybacked ACK body if any, the CRC and, on an authenticated
	// connection, the trailer). It aliases the message being sent.
	Payload []byte
	Tail    int
	// Control reports a control datagram (ACK, probe, HELLO, HELLO-ACK,
	// CLOSE): one a network may serve ahead of data (a DSCP class of its
	// own, as UEC's and MRC's control class). DATA, with or without a
	// piggybacked ACK, is not control.
	Control bool
}

// PollTransmit writes the next datagram to send into buf, which must be at
// least Config.MaxDatagram long (it returns false for a shorter one), and
// says where it goes. It returns false when nothing is to be sent at now.
// Connections take turns.
func (e *Endpoint) PollTransmit(now time.Duration, buf []byte) (Transmit, bool) {
	return e.PollTransmitVec(now, buf, 0)
}

// PollTransmitVec is PollTransmit for a driver that sends a datagram in
// parts (a gathering write): a DATA payload of at least minGather bytes is
// not copied into buf but returned as Transmit.Payload, a slice of the
// message being sent; the datagram is buf[:N], then Payload, then
// buf[N:N+Tail] (see Transmit.Payload). minGather 0 or less means never
// (PollTransmit).
// The core never writes Payload. It is borrowed from the message's sender
// like the message itself: after the message's EventSendDone or
// CancelSend its owner may change it, and a datagram still being written
// then goes out damaged, which the receiver drops by its CRC (it has or
// no longer wants that piece). So a driver that writes outside its lock
// must not hand the buffer back to the message's owner while such a
// write is in progress (mrtransport holds the send's end until then).
func (e *Endpoint) PollTransmitVec(now time.Duration, buf []byte, minGather int) (Transmit, bool) {
	e.gatherMin, e.gathered = max(minGather, 0), nil
	defer func() { e.gatherMin, e.gathered = 0, nil }()
	if len(buf) < e.cfg.MaxDatagram {
		return Transmit{}, false
	}
	buf = buf[:0]
	if n := len(e.closes); n > 0 {
		pc := e.closes[n-1]
		if pc.ack != nil {
			e.closes[n-1].ack = nil
			out := append(buf, pc.ack...)
			if pc.auth != nil {
				out = pc.auth.seal(int(pc.path), out, false)
			}
			return Transmit{Peer: pc.peer, Path: int(pc.path), N: len(out), Control: true}, true
		}
		e.closes = e.closes[:n-1]
		out := wire.AppendClose(buf, &wire.Close{Conn: pc.conn, Path: pc.path, Code: pc.code, Echo: pc.echo})
		if pc.auth != nil {
			out = pc.auth.seal(int(pc.path), out, false)
		}
		return Transmit{Peer: pc.peer, Path: int(pc.path), N: len(out), Control: true}, true
	}
	n := len(e.order)
	for k := range n {
		c := e.order[(e.cursor+k)%n]
		if c.quiet(now) {
			continue
		}
		c.timerOK = false
		if c.auth != nil && c.auth.mode != AuthHeader {
			e.gatherMin = 0 // the tag covers, or encrypts, the payload in the buffer
		}
		out, path, ok := c.poll(now, buf)
		e.gatherMin = max(minGather, 0)
		if ok {
			e.cursor = (e.cursor + k + 1) % n
			control := wire.Type(out[1]) != wire.TypeData
			if c.auth != nil && wire.Type(out[1]) != wire.TypeHelloAck {
				out = c.auth.seal(path, out, e.gathered != nil)
			}
			tx := Transmit{Conn: c.id, Peer: c.peer, Path: path, N: len(out), Control: control}
			if e.gathered != nil {
				// wire.AppendDataSplit: the head, then (left out) the
				// payload, then the rest.
				tx.N, tx.Payload, tx.Tail = wire.DataHeadLen, e.gathered, len(out)-wire.DataHeadLen
			}
			return tx, true
		}
	}
	return Transmit{}, false
}
