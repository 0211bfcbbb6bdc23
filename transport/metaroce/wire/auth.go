package wire

import "encoding/binary"

// Authenticated packets. On a connection set up with a key every packet
// but HELLO, HELLO-ACK and a CLOSE with CloseAuth ends in a trailer, after
// its CRC:
//
//	16 tag   8 packet number
//
// The packet number counts the sender's packets on one path (socket
// index) of the connection, from 1; it is the tag's nonce and what a
// receiver rejects replays by. What the tag covers, and how, is the core's
// (metaroce's authentication modes): HeaderCovered says which bytes a
// header tag covers; an encrypted packet keeps its 12-byte header in clear
// and carries the rest of the packet, CRC included, encrypted in place.
const (
	TagLen     = 16
	PNLen      = 8
	TrailerLen = TagLen + PNLen
)

// SplitTrailer splits an authenticated datagram into the packet before
// its trailer, the trailer's tag (aliasing b) and its packet number. It
// fails with ErrShort if b cannot hold a header, a CRC and a trailer.
func SplitTrailer(b []byte) (p, tag []byte, pn uint64, err error) {
	if len(b) < MinPacketLen+TrailerLen {
		return nil, nil, 0, ErrShort
	}
	n := len(b) - TrailerLen
	return b[:n], b[n : n+TagLen], binary.BigEndian.Uint64(b[n+TagLen:]), nil
}

// AppendPN appends a trailer's packet number (after its tag) to b.
func AppendPN(b []byte, pn uint64) []byte { return binary.BigEndian.AppendUint64(b, pn) }

// PeekHeader decodes the header of b, checking only its length and
// version, not the CRC: what a receiver reads to find the connection and
// so the key a packet's trailer is checked with.
func PeekHeader(b []byte) (Header, error) {
	switch {
	case len(b) < HeaderLen:
		return Header{}, ErrShort
	case b[0] != Version:
		return Header{}, ErrVersion
	}
	return Header{Type: Type(b[1]), Flags: b[2], Path: b[3], Conn: binary.BigEndian.Uint64(b[4:12])}, nil
}

// HeaderCovered returns the bytes of packet p (a whole packet, CRC
// included, without trailer) that a header tag covers, in two parts: for
// a DATA packet, its head (header and fixed fields, DataHeadLen bytes)
// and the bytes between payload and CRC (a piggybacked ACK body, usually
// none); for any other packet, everything before the CRC and nil. It
// fails with ErrShort or ErrMalformed if p is too short or its payload
// length field does not fit in it; it checks nothing else.
func HeaderCovered(p []byte) (a, b []byte, err error) {
	if len(p) < MinPacketLen {
		return nil, nil, ErrShort
	}
	n := len(p) - CRCLen
	if Type(p[1]) != TypeData {
		return p[:n], nil, nil
	}
	if n < DataHeadLen {
		return nil, nil, ErrShort
	}
	plen := uint64(binary.BigEndian.Uint32(p[DataHeadLen-4:]))
	if plen > uint64(n-DataHeadLen) {
		return nil, nil, ErrMalformed
	}
	return p[:DataHeadLen], p[DataHeadLen+int(plen) : n], nil
}
