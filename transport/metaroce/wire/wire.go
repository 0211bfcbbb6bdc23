package wire

import (
	"encoding/binary"
	"errors"

	"github.com/gocoll/gocoll/transport/metaroce/internal/crc32c"
)

// Version is the only protocol version this package reads and writes. A
// packet of another version is dropped (ErrVersion), so two endpoints of
// different versions never misread each other; they do not connect. 2
// added the HELLO timestamp, the ACK's send timestamp and the ACK block's
// skip (a SACK bitmap that may start above the cumulative sequence
// number). Authentication (the HELLO's optional fields, CLOSE's
// CloseAuth and the trailer of auth.go) changes nothing for endpoints
// without a key: their packets are as they were.
const Version = 2

// Type is a packet type, the second byte of every packet.
type Type uint8

// Packet types.
const (
	TypeHello    Type = 1 // connection request
	TypeHelloAck Type = 2 // connection accepted
	TypeData     Type = 3 // a piece of a message
	TypeAck      Type = 4 // per-path SACK blocks, target rate, credit, grants
	TypeProbe    Type = 5 // path liveness probe or its reply
	TypeClose    Type = 6 // connection torn down
)

func (t Type) String() string {
	switch t {
	case TypeHello:
		return "HELLO"
	case TypeHelloAck:
		return "HELLO-ACK"
	case TypeData:
		return "DATA"
	case TypeAck:
		return "ACK"
	case TypeProbe:
		return "PROBE"
	case TypeClose:
		return "CLOSE"
	}
	return "UNKNOWN"
}

// Sizes of the fixed parts of a packet.
const (
	HeaderLen = 12 // version, type, flags, path, connection id
	CRCLen    = 4  // CRC32C trailer
	// MinPacketLen is the smallest well-formed packet (a header and a CRC).
	MinPacketLen = HeaderLen + CRCLen
)

// Errors returned by the parsers. Test with errors.Is; each names a reason a
// receiver counts a dropped datagram under.
var (
	ErrShort     = errors.New("wire: packet truncated")
	ErrVersion   = errors.New("wire: unknown version")
	ErrChecksum  = errors.New("wire: CRC32C mismatch")
	ErrType      = errors.New("wire: unexpected packet type")
	ErrMalformed = errors.New("wire: malformed packet")
)

// Header is the common prefix of every packet.
type Header struct {
	Type  Type
	Flags uint8  // meaning depends on Type
	Path  uint8  // path index the packet belongs to or travels on
	Conn  uint64 // the receiver's connection id (0 in a HELLO)
}

// appendHeader appends the 12-byte header.
func appendHeader(b []byte, h Header) []byte {
	b = append(b, Version, byte(h.Type), h.Flags, h.Path)
	return binary.BigEndian.AppendUint64(b, h.Conn)
}

// appendCRC appends the CRC32C of b[start:].
func appendCRC(b []byte, start int) []byte {
	return binary.BigEndian.AppendUint32(b, crc32c.Checksum(b[start:]))
}

// Open checks a packet's length, version and CRC32C and returns its header
// and its body (the bytes between header and CRC, aliasing b). It does not
// allocate. Every parser below calls it first.
func Open(b []byte) (Header, []byte, error) {
	if len(b) < MinPacketLen {
		return Header{}, nil, ErrShort
	}
	if b[0] != Version {
		return Header{}, nil, ErrVersion
	}
	n := len(b) - CRCLen
	if !crcMatches(b) {
		return Header{}, nil, ErrChecksum
	}
	h := Header{Type: Type(b[1]), Flags: b[2], Path: b[3], Conn: binary.BigEndian.Uint64(b[4:12])}
	return h, b[HeaderLen:n], nil
}

// crcMatches reports whether packet b (at least MinPacketLen bytes) ends in
// the CRC32C of the bytes it covers: all before it, less the payload of a
// DATA packet with FlagPayloadUnchecked.
func crcMatches(b []byte) bool {
	n := len(b) - CRCLen
	want := binary.BigEndian.Uint32(b[n:])
	if Type(b[1]) != TypeData || b[2]&FlagPayloadUnchecked == 0 || n < DataHeadLen {
		return crc32c.Checksum(b[:n]) == want
	}
	plen := uint64(binary.BigEndian.Uint32(b[DataHeadLen-4:]))
	if plen > uint64(n-DataHeadLen) {
		return false // a damaged length; DecodeData would reject it anyway
	}
	return partsCRC(b[:DataHeadLen], nil, b[DataHeadLen+int(plen):n]) == want
}

// partsCRC is the CRC32C of a, b and c in turn.
func partsCRC(a, b, c []byte) uint32 {
	crc := crc32c.Checksum(a)
	crc = crc32c.Update(crc, b)
	return crc32c.Update(crc, c)
}

// reader decodes big-endian fields from a body and remembers the first
// error, so that parsers read straight through and check once.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) take(n int) []byte {
	if r.bad || len(r.b) < n {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() uint8 {
	if v := r.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if v := r.take(2); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if v := r.take(8); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// done reports ErrShort if a field was missing and ErrMalformed if bytes are
// left over.
func (r *reader) done() error {
	switch {
	case r.bad:
		return ErrShort
	case len(r.b) != 0:
		return ErrMalformed
	}
	return nil
}
