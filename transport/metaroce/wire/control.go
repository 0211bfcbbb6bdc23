package wire

import (
	"encoding/binary"
	"time"
)

// Hello is a HELLO (connection request) or HELLO-ACK (acceptance). Both
// carry the sender's parameters; the connection uses the smaller of the two
// sides' Paths and MaxDatagram, and each side honours the other's
// MsgWindow and Budget.
type Hello struct {
	Ack  bool   // HELLO-ACK rather than HELLO
	Conn uint64 // receiver's connection id: 0 in a HELLO, the initiator's in a HELLO-ACK
	Path uint8  // path the packet travels on
	// Src is the sender's own connection id, which the peer puts in the
	// Conn field of every later packet.
	Src         uint64
	Node        uint64 // the sender's node id (for example its rank)
	Paths       uint16 // paths the sender offers, 1 to 256
	MaxDatagram uint32 // largest datagram the sender accepts
	MsgWindow   uint32 // the sender's receive message window
	Budget      uint64 // the sender's unexpected-message byte budget (initial credit)
	// SentAt is, in a HELLO, when it was sent (the sender's clock); a
	// HELLO-ACK echoes the SentAt of the HELLO it answers, so that the
	// initiator times the handshake's round trip exactly even when it
	// sent several HELLOs.
	SentAt time.Duration
	// Auth is the authentication the sender asks for (a HELLO) or the
	// connection uses (a HELLO-ACK: at least the HELLO's): 0 none, up to
	// MaxAuth; its meaning is the core's (metaroce.AuthMode). Nonce is the
	// sender's fresh random challenge and Proof its keyed proof over the
	// packet (see metaroce.AuthMode), both opaque to this package. With
	// Auth 0 they are not sent (and parse as zero).
	Auth         uint8
	Nonce, Proof [NonceLen]byte
	// AckRoom (flag FlagAckRoom) asks, in a HELLO, that the connection's
	// DATA pieces leave AckRoomLen bytes free for a piggybacked ACK; a
	// HELLO-ACK sets it if the connection does (both sides asked). See
	// AckRoomLen.
	AckRoom bool
}

// FlagAckRoom is the HELLO and HELLO-ACK flag of Hello.AckRoom. A parser
// older than it rejects a HELLO that carries it (it rejected every HELLO
// flag), so a peer of such a version does not connect to one that sets it.
const FlagAckRoom = 1

// AckRoomLen is the room a DATA piece leaves for a piggybacked ACK body on
// a connection whose HELLO and HELLO-ACK both carry FlagAckRoom, and whose
// datagram is at least AckRoomMinDatagram: the body of an ACK of two
// blocks and no grant. Both ends cut the pieces of every message that
// much shorter than the datagram allows (a receiver places a piece by
// its index, so the two must agree), and a full piece then has room for
// the ACK its sender owes when the ACK reports at most two paths.
const AckRoomLen = ackFixedLen + 2*AckBlockLen

// AckRoomMinDatagram is the least connection datagram at which
// FlagAckRoom takes effect: below it the room would cost more than 4 %
// of each piece.
const AckRoomMinDatagram = 4096

// NonceLen is the size of a HELLO's nonce and proof.
const NonceLen = 16

// MaxAuth is the highest Hello.Auth a parser accepts.
const MaxAuth = 3

const (
	helloBodyLen = 8 + 8 + 2 + 4 + 4 + 8 + 8
	helloAuthLen = 1 + 2*NonceLen // the optional authentication fields
)

// Datagram size bounds a HELLO may announce: room for a DATA header with
// payload and for ACK blocks at the low end, the largest UDP payload at the
// high end.
const (
	MinDatagram = 256
	MaxDatagram = 65507
)

// AppendHello appends a HELLO or HELLO-ACK packet to b.
func AppendHello(b []byte, h *Hello) []byte {
	start := len(b)
	t := TypeHello
	if h.Ack {
		t = TypeHelloAck
	}
	var flags uint8
	if h.AckRoom {
		flags = FlagAckRoom
	}
	b = appendHeader(b, Header{Type: t, Flags: flags, Path: h.Path, Conn: h.Conn})
	b = binary.BigEndian.AppendUint64(b, h.Src)
	b = binary.BigEndian.AppendUint64(b, h.Node)
	b = binary.BigEndian.AppendUint16(b, h.Paths)
	b = binary.BigEndian.AppendUint32(b, h.MaxDatagram)
	b = binary.BigEndian.AppendUint32(b, h.MsgWindow)
	b = binary.BigEndian.AppendUint64(b, h.Budget)
	b = binary.BigEndian.AppendUint64(b, uint64(h.SentAt))
	if h.Auth != 0 {
		b = append(b, h.Auth)
		b = append(b, h.Nonce[:]...)
		b = append(b, h.Proof[:]...)
	}
	return appendCRC(b, start)
}

// ParseHello parses a HELLO or HELLO-ACK packet. It rejects flags other
// than FlagAckRoom, a zero
// Src, Paths outside 1..256, MaxDatagram outside MinDatagram..MaxDatagram,
// a zero MsgWindow, authentication fields with an Auth of 0 or above
// MaxAuth, a HELLO whose Conn is not 0 and a HELLO-ACK whose Conn is 0.
func ParseHello(b []byte, h *Hello) error {
	hd, body, err := Open(b)
	if err != nil {
		return err
	}
	return DecodeHello(hd, body, h)
}

// DecodeHello decodes a HELLO or HELLO-ACK packet that Open accepted, from
// Open's header and body, with ParseHello's checks after Open's.
func DecodeHello(hd Header, body []byte, h *Hello) error {
	if hd.Type != TypeHello && hd.Type != TypeHelloAck {
		return ErrType
	}
	r := reader{b: body}
	*h = Hello{Ack: hd.Type == TypeHelloAck, Conn: hd.Conn, Path: hd.Path, AckRoom: hd.Flags&FlagAckRoom != 0}
	h.Src, h.Node = r.u64(), r.u64()
	h.Paths, h.MaxDatagram, h.MsgWindow, h.Budget = r.u16(), r.u32(), r.u32(), r.u64()
	h.SentAt = time.Duration(r.u64())
	if len(r.b) == helloAuthLen {
		h.Auth = r.u8()
		copy(h.Nonce[:], r.take(NonceLen))
		copy(h.Proof[:], r.take(NonceLen))
		if h.Auth == 0 {
			return ErrMalformed // not the canonical form
		}
	}
	if err := r.done(); err != nil {
		return err
	}
	switch {
	case hd.Flags&^FlagAckRoom != 0, h.Src == 0, h.Paths == 0, h.Paths > 256, h.MsgWindow == 0,
		h.MaxDatagram < MinDatagram, h.MaxDatagram > MaxDatagram, h.Auth > MaxAuth,
		!h.Ack && h.Conn != 0, h.Ack && h.Conn == 0:
		return ErrMalformed
	}
	return nil
}

// FlagReply marks a PROBE that answers another.
const FlagReply = 1

// Probe asks the peer to answer on the same path, proving the path works
// in both directions; the answer echoes Nonce and SentAt.
type Probe struct {
	Conn   uint64
	Path   uint8
	Reply  bool
	Nonce  uint64
	SentAt time.Duration // the prober's clock, echoed unchanged in the reply
}

// AppendProbe appends a PROBE packet to b.
func AppendProbe(b []byte, p *Probe) []byte {
	start := len(b)
	var flags uint8
	if p.Reply {
		flags = FlagReply
	}
	b = appendHeader(b, Header{Type: TypeProbe, Flags: flags, Path: p.Path, Conn: p.Conn})
	b = binary.BigEndian.AppendUint64(b, p.Nonce)
	b = binary.BigEndian.AppendUint64(b, uint64(p.SentAt))
	return appendCRC(b, start)
}

// ParseProbe parses a PROBE packet.
func ParseProbe(b []byte, p *Probe) error {
	h, body, err := Open(b)
	if err != nil {
		return err
	}
	return DecodeProbe(h, body, p)
}

// DecodeProbe decodes a PROBE packet that Open accepted, from Open's header
// and body, with ParseProbe's checks after Open's.
func DecodeProbe(h Header, body []byte, p *Probe) error {
	if h.Type != TypeProbe {
		return ErrType
	}
	if h.Flags&^FlagReply != 0 {
		return ErrMalformed
	}
	r := reader{b: body}
	*p = Probe{Conn: h.Conn, Path: h.Path, Reply: h.Flags&FlagReply != 0}
	p.Nonce, p.SentAt = r.u64(), time.Duration(r.u64())
	return r.done()
}

// Close tears a connection down; Code says why (0: normal close). A CLOSE
// with CloseAuth refuses a HELLO and carries Echo, the refused HELLO's
// nonce, which an off-path sender cannot know; other codes carry no Echo.
type Close struct {
	Conn uint64
	Path uint8
	Code uint32
	Echo [NonceLen]byte
}

// Close codes.
const (
	CloseNormal   = 0 // the application closed the connection
	CloseIdle     = 1 // the sender timed the connection out
	CloseProtocol = 2 // the peer broke the protocol
	CloseAuth     = 3 // a HELLO refused: no key, or not the job's key
)

// AppendClose appends a CLOSE packet to b.
func AppendClose(b []byte, c *Close) []byte {
	start := len(b)
	b = appendHeader(b, Header{Type: TypeClose, Path: c.Path, Conn: c.Conn})
	b = binary.BigEndian.AppendUint32(b, c.Code)
	if c.Code == CloseAuth {
		b = append(b, c.Echo[:]...)
	}
	return appendCRC(b, start)
}

// ParseClose parses a CLOSE packet.
func ParseClose(b []byte, c *Close) error {
	h, body, err := Open(b)
	if err != nil {
		return err
	}
	return DecodeClose(h, body, c)
}

// DecodeClose decodes a CLOSE packet that Open accepted, from Open's header
// and body, with ParseClose's checks after Open's.
func DecodeClose(h Header, body []byte, c *Close) error {
	if h.Type != TypeClose {
		return ErrType
	}
	if h.Flags != 0 {
		return ErrMalformed
	}
	r := reader{b: body}
	*c = Close{Conn: h.Conn, Path: h.Path, Code: r.u32()}
	if c.Code == CloseAuth {
		copy(c.Echo[:], r.take(NonceLen))
	}
	return r.done()
}
