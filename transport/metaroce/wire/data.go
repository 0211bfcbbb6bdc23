package wire

import (
	"encoding/binary"
	"time"
)

// DATA flags.
const (
	FlagFirst       = 1 << 0 // the piece starts at offset 0
	FlagLast        = 1 << 1 // the piece ends at the message's total length
	FlagRetransmit  = 1 << 2 // a resend of a piece declared lost
	FlagUnconfirmed = 1 << 3 // sent before the receiver granted the message; counts against credit
	FlagAnnounce    = 1 << 4 // carries no payload; tells the receiver the message exists
	FlagAbort       = 1 << 5 // the sender cancelled the message; Offset holds its unconfirmed bytes sent
	FlagAck         = 1 << 6 // an ACK body follows the payload (a piggybacked ACK)
	// FlagPayloadUnchecked: the CRC32C covers the packet but not its
	// payload. Only for links that cannot damage data, such as loopback.
	FlagPayloadUnchecked = 1 << 7

	dataFlagsKnown = FlagFirst | FlagLast | FlagRetransmit | FlagUnconfirmed | FlagAnnounce | FlagAbort | FlagAck | FlagPayloadUnchecked
)

// DataFixedLen is the size of a DATA body without its payload.
const DataFixedLen = 7*8 + 4

// DataHeadLen is the size of a DATA packet's bytes before its payload: the
// header and the fixed fields. A receiver that places payloads straight
// into memory reads this much first (see ParseDataParts).
const DataHeadLen = HeaderLen + DataFixedLen

// DataOverhead is the size of a DATA packet with an empty payload.
const DataOverhead = HeaderLen + DataFixedLen + CRCLen

// MaxMessageLen bounds a message's total length (1 TiB), so that offsets and
// lengths never overflow.
const MaxMessageLen = 1 << 40

// Data is one piece of a message.
type Data struct {
	Conn    uint64        // receiver's connection id
	Path    uint8         // path whose sequence space Seq belongs to
	Flags   uint8         // Flag* bits
	Seq     uint64        // per-path sequence number
	SentAt  time.Duration // sender's clock when sent, echoed in ACKs
	Stream  uint64        // match key, part 1 (communicator or tag)
	Msg     uint64        // match key, part 2
	MsgSeq  uint64        // sender-assigned number of the message on this connection
	Total   uint64        // the message's total length in bytes
	Offset  uint64        // where Payload goes in the message
	Payload []byte        // the bytes; aliases the packet after ParseData
	// AckBody, with FlagAck, is a piggybacked ACK: the body of an ACK
	// packet (its bytes between header and CRC, as DecodeAck takes them)
	// after the payload. It aliases the packet after ParseData.
	AckBody []byte
}

// AppendData appends d as a packet to b and returns the extended slice.
func AppendData(b []byte, d *Data) []byte {
	start := len(b)
	b = appendHeader(b, Header{Type: TypeData, Flags: d.Flags, Path: d.Path, Conn: d.Conn})
	b = binary.BigEndian.AppendUint64(b, d.Seq)
	b = binary.BigEndian.AppendUint64(b, uint64(d.SentAt))
	b = binary.BigEndian.AppendUint64(b, d.Stream)
	b = binary.BigEndian.AppendUint64(b, d.Msg)
	b = binary.BigEndian.AppendUint64(b, d.MsgSeq)
	b = binary.BigEndian.AppendUint64(b, d.Total)
	b = binary.BigEndian.AppendUint64(b, d.Offset)
	b = binary.BigEndian.AppendUint32(b, uint32(len(d.Payload)))
	b = append(b, d.Payload...)
	if d.Flags&FlagAck != 0 {
		b = append(b, d.AckBody...)
	}
	if d.Flags&FlagPayloadUnchecked == 0 {
		return appendCRC(b, start)
	}
	head, tail := b[start:start+DataHeadLen], b[start+DataHeadLen+len(d.Payload):]
	return binary.BigEndian.AppendUint32(b, partsCRC(head, nil, tail))
}

// AckBody returns the body of an ACK packet that AppendAck made: the bytes
// that Data.AckBody carries.
func AckBody(packet []byte) []byte { return packet[HeaderLen : len(packet)-CRCLen] }

// AppendDataSplit is AppendData for a sender that gathers the payload from
// where it is instead of copying it: it appends d's header and fields, then
// d.AckBody if d carries FlagAck, then the packet's CRC32C (over all of
// those and d.Payload), but not the payload. Of the bytes it appends, the
// first DataHeadLen are the packet's start; d.Payload follows them in the
// packet, then the rest (the ACK body, if any, and the CRC).
func AppendDataSplit(b []byte, d *Data) []byte {
	start := len(b)
	b = appendHeader(b, Header{Type: TypeData, Flags: d.Flags, Path: d.Path, Conn: d.Conn})
	b = binary.BigEndian.AppendUint64(b, d.Seq)
	b = binary.BigEndian.AppendUint64(b, uint64(d.SentAt))
	b = binary.BigEndian.AppendUint64(b, d.Stream)
	b = binary.BigEndian.AppendUint64(b, d.Msg)
	b = binary.BigEndian.AppendUint64(b, d.MsgSeq)
	b = binary.BigEndian.AppendUint64(b, d.Total)
	b = binary.BigEndian.AppendUint64(b, d.Offset)
	b = binary.BigEndian.AppendUint32(b, uint32(len(d.Payload)))
	var payload, tail []byte
	if d.Flags&FlagPayloadUnchecked == 0 {
		payload = d.Payload
	}
	if d.Flags&FlagAck != 0 {
		b = append(b, d.AckBody...)
		tail = b[start+DataHeadLen:]
	}
	return binary.BigEndian.AppendUint32(b, partsCRC(b[start:start+DataHeadLen], payload, tail))
}

// ParseData parses a DATA packet into d without allocating; d.Payload and
// d.AckBody alias b. Besides the checks of Open, it rejects unknown flags, a
// length field that disagrees with the packet size (which, with FlagAck,
// must leave room for a well-formed ACK body after the payload), a piece
// that does not fit in the message, a total above MaxMessageLen,
// First/Last flags that disagree with the offsets, and payload on an
// announce or abort.
func ParseData(b []byte, d *Data) error {
	h, body, err := Open(b)
	if err != nil {
		return err
	}
	return DecodeData(h, body, d)
}

// PeekDataHead decodes the header and fields of a DATA packet from its
// first DataHeadLen bytes, before the rest has been read, and returns the
// payload length the fields give. Nothing is checked beyond the version
// and the type: the CRC covers bytes not yet read, so the result is only a
// guess of where the payload goes, which ParseDataParts confirms or
// refutes once the whole packet is in. d.Payload and d.AckBody are nil.
func PeekDataHead(head []byte, d *Data) (int, error) {
	switch {
	case len(head) < DataHeadLen:
		return 0, ErrShort
	case head[0] != Version:
		return 0, ErrVersion
	case Type(head[1]) != TypeData:
		return 0, ErrType
	}
	h := Header{Type: TypeData, Flags: head[2], Path: head[3], Conn: binary.BigEndian.Uint64(head[4:12])}
	return int(d.decodeFields(h, head[HeaderLen:])), nil
}

// ParseDataParts is ParseData for a DATA packet that was read in three
// parts: head, its first DataHeadLen bytes; payload, exactly as many bytes
// as head's length field says (a receiver reads them straight into their
// destination); and tail, the rest of the packet (a piggybacked ACK body,
// if any, and the CRC). It makes ParseData's checks; d.Payload aliases
// payload and d.AckBody tail.
func ParseDataParts(head, payload, tail []byte, d *Data) error {
	switch {
	case len(head) != DataHeadLen || len(tail) < CRCLen:
		return ErrShort
	case head[0] != Version:
		return ErrVersion
	case uint64(binary.BigEndian.Uint32(head[DataHeadLen-4:])) != uint64(len(payload)):
		return ErrMalformed
	}
	crc := binary.BigEndian.Uint32(tail[len(tail)-CRCLen:])
	tail = tail[:len(tail)-CRCLen]
	checked := payload
	if head[2]&FlagPayloadUnchecked != 0 {
		checked = nil
	}
	if partsCRC(head, checked, tail) != crc {
		return ErrChecksum
	}
	h := Header{Type: Type(head[1]), Flags: head[2], Path: head[3], Conn: binary.BigEndian.Uint64(head[4:12])}
	if h.Type != TypeData {
		return ErrType
	}
	d.decodeFields(h, head[HeaderLen:])
	return d.decodeRest(h, payload, tail)
}

// DecodeData decodes a DATA packet that Open accepted, from Open's header
// and body, with ParseData's checks after Open's; it does not check the
// CRC again. d.Payload aliases body.
func DecodeData(h Header, body []byte, d *Data) error {
	if h.Type != TypeData {
		return ErrType
	}
	if len(body) < DataFixedLen {
		return ErrShort
	}
	n := uint64(d.decodeFields(h, body))
	rest := body[DataFixedLen:]
	if n > uint64(len(rest)) || (d.Flags&FlagAck == 0 && n != uint64(len(rest))) {
		return ErrMalformed
	}
	return d.decodeRest(h, rest[:n], rest[n:])
}

// decodeFields sets d from h and the fixed fields at the start of f (at
// least DataFixedLen bytes) and returns the payload length field.
func (d *Data) decodeFields(h Header, f []byte) uint32 {
	*d = Data{Conn: h.Conn, Path: h.Path, Flags: h.Flags}
	d.Seq = binary.BigEndian.Uint64(f[0:])
	d.SentAt = time.Duration(binary.BigEndian.Uint64(f[8:]))
	d.Stream = binary.BigEndian.Uint64(f[16:])
	d.Msg = binary.BigEndian.Uint64(f[24:])
	d.MsgSeq = binary.BigEndian.Uint64(f[32:])
	d.Total = binary.BigEndian.Uint64(f[40:])
	d.Offset = binary.BigEndian.Uint64(f[48:])
	return binary.BigEndian.Uint32(f[56:])
}

// decodeRest sets d's payload and piggybacked ACK body (which must be
// empty without FlagAck and well formed with it) and validates d.
func (d *Data) decodeRest(h Header, payload, ackBody []byte) error {
	d.Payload = payload
	if d.Flags&FlagAck != 0 {
		d.AckBody = ackBody
		var a Ack
		if DecodeAck(Header{Type: TypeAck, Path: h.Path, Conn: h.Conn}, ackBody, &a) != nil {
			return ErrMalformed
		}
	} else if len(ackBody) != 0 {
		return ErrMalformed
	}
	return d.validate()
}

func (d *Data) validate() error {
	n := uint64(len(d.Payload))
	switch {
	case d.Flags&^dataFlagsKnown != 0, d.Total > MaxMessageLen:
		return ErrMalformed
	case d.Flags&(FlagAnnounce|FlagAbort) != 0:
		// Control pieces: no payload; an abort's Offset is a byte count.
		if n != 0 || d.Flags&(FlagFirst|FlagLast) != 0 || (d.Flags&FlagAbort == 0 && d.Offset != 0) {
			return ErrMalformed
		}
		if d.Flags&FlagAbort != 0 && d.Offset > d.Total {
			return ErrMalformed
		}
		return nil
	case d.Offset > d.Total || n > d.Total-d.Offset:
		return ErrMalformed
	case (d.Offset == 0) != (d.Flags&FlagFirst != 0):
		return ErrMalformed
	case (d.Offset+n == d.Total) != (d.Flags&FlagLast != 0):
		return ErrMalformed
	}
	return nil
}
