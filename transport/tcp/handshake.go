package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Handshake. The dialing rank sends a hello; the accepting rank checks it
// and answers with its own hello, a status byte, a reason length byte and
// the reason (empty when accepted). Both hellos have the layout below
// (little endian, helloLen bytes):
//
//	0  magic [8]"gocolTCP"   8 version u16   10 conn index u16
//	12 conns per peer u16    14 flags u8 (1: keyed, auth.go)  15 reserved u8 (zero)
//	16 job id u64            24 world size u32
//	28 from rank u32         32 to rank u32  36 eager credit granted u64
const (
	helloMagic   = "gocolTCP"
	helloVersion = 1
	helloLen     = 44
)

// Handshake statuses.
const (
	statusAccepted = 0
	statusRefused  = 1
)

// hello is a decoded handshake message.
type hello struct {
	version   uint16
	connIndex uint16
	conns     uint16
	job       uint64
	size      uint32
	from, to  uint32
	credit    uint64 // eager bytes the sender of the hello lets the other side have outstanding
	keyed     bool   // the sender holds a job key (auth.go)
	payload   PayloadMode
}

// ErrRefused is wrapped by errors about a handshake the other side refused,
// or one this side refused.
var ErrRefused = errors.New("tcp: connection refused by handshake")

func appendHello(b []byte, h hello) []byte {
	b = append(b, helloMagic...)
	b = binary.LittleEndian.AppendUint16(b, h.version)
	b = binary.LittleEndian.AppendUint16(b, h.connIndex)
	b = binary.LittleEndian.AppendUint16(b, h.conns)
	flags := byte(h.payload) << 1
	if h.keyed {
		flags |= helloKeyed
	}
	b = append(b, flags, 0)
	b = binary.LittleEndian.AppendUint64(b, h.job)
	b = binary.LittleEndian.AppendUint32(b, h.size)
	b = binary.LittleEndian.AppendUint32(b, h.from)
	b = binary.LittleEndian.AppendUint32(b, h.to)
	return binary.LittleEndian.AppendUint64(b, h.credit)
}

// parseHello decodes a hello. It checks only the framing (magic, version,
// reserved bits); checkHello checks the content against what is expected.
func parseHello(b []byte) (hello, error) {
	if len(b) < helloLen {
		return hello{}, fmt.Errorf("%w: short hello (%d bytes)", ErrRefused, len(b))
	}
	if string(b[:8]) != helloMagic {
		return hello{}, fmt.Errorf("%w: not a gocoll tcp transport peer (bad magic %q)", ErrRefused, b[:8])
	}
	h := hello{
		version:   binary.LittleEndian.Uint16(b[8:]),
		connIndex: binary.LittleEndian.Uint16(b[10:]),
		conns:     binary.LittleEndian.Uint16(b[12:]),
		job:       binary.LittleEndian.Uint64(b[16:]),
		size:      binary.LittleEndian.Uint32(b[24:]),
		from:      binary.LittleEndian.Uint32(b[28:]),
		to:        binary.LittleEndian.Uint32(b[32:]),
		credit:    binary.LittleEndian.Uint64(b[36:]),
		keyed:     b[14]&helloKeyed != 0,
		payload:   PayloadMode(b[14] >> 1),
	}
	if h.version != helloVersion {
		return hello{}, fmt.Errorf("%w: protocol version %d, want %d", ErrRefused, h.version, helloVersion)
	}
	if b[14]>>1 > byte(PayloadEncrypted) || (b[14]&helloKeyed == 0 && b[14] != 0) || b[15] != 0 {
		return hello{}, fmt.Errorf("%w: reserved hello bytes not zero", ErrRefused)
	}
	return h, nil
}

// checkHello compares a peer's hello with what this side expects: the
// same job, world size and connection count, and the expected ranks.
func checkHello(got, want hello) error {
	switch {
	case got.job != want.job:
		return fmt.Errorf("%w: job id %#x, want %#x (a rank of another job?)", ErrRefused, got.job, want.job)
	case got.size != want.size:
		return fmt.Errorf("%w: world size %d, want %d", ErrRefused, got.size, want.size)
	case got.conns != want.conns:
		return fmt.Errorf("%w: %d connections per peer, want %d", ErrRefused, got.conns, want.conns)
	case got.to != want.to:
		return fmt.Errorf("%w: addressed to rank %d, this is rank %d", ErrRefused, got.to, want.to)
	case got.from != want.from:
		return fmt.Errorf("%w: from rank %d, want rank %d", ErrRefused, got.from, want.from)
	case got.connIndex != want.connIndex:
		return fmt.Errorf("%w: connection index %d, want %d", ErrRefused, got.connIndex, want.connIndex)
	}
	return nil
}

// appendReply appends the accepting side's answer: its hello, with a key
// its nonce and proof (auth, 32 bytes), the status and the reason (cut to
// 255 bytes).
func appendReply(b []byte, h hello, auth []byte, refusal error) []byte {
	b = appendHello(b, h)
	if h.keyed {
		b = append(b, auth...)
	}
	if refusal == nil {
		return append(b, statusAccepted, 0)
	}
	reason := strings.TrimPrefix(refusal.Error(), ErrRefused.Error()+": ")
	if len(reason) > 255 {
		reason = reason[:255]
	}
	b = append(b, statusRefused, byte(len(reason)))
	return append(b, reason...)
}

// readReply reads the accepting side's answer from r: its hello as sent
// and, with a key, its nonce and proof (auth). A refusal is returned as an
// error wrapping ErrRefused with the peer's reason.
func readReply(r io.Reader) (h hello, raw, auth []byte, err error) {
	b := make([]byte, helloLen, helloLen+nonceLen+proofLen+2)
	if _, err := io.ReadFull(r, b); err != nil {
		return hello{}, nil, nil, fmt.Errorf("reading handshake reply: %w", err)
	}
	if h, err = parseHello(b); err != nil {
		return hello{}, nil, nil, err
	}
	more := 2
	if h.keyed {
		more += nonceLen + proofLen
	}
	b = b[:helloLen+more]
	if _, err := io.ReadFull(r, b[helloLen:]); err != nil {
		return hello{}, nil, nil, fmt.Errorf("reading handshake reply: %w", err)
	}
	raw, auth = b[:helloLen], b[helloLen:len(b)-2]
	status, n := b[len(b)-2], int(b[len(b)-1])
	if status == statusAccepted && n == 0 {
		return h, raw, auth, nil
	}
	reason := make([]byte, n)
	if _, err := io.ReadFull(r, reason); err != nil {
		return hello{}, nil, nil, fmt.Errorf("reading handshake refusal: %w", err)
	}
	if status != statusRefused {
		return hello{}, nil, nil, fmt.Errorf("%w: bad handshake status %d", ErrRefused, status)
	}
	return hello{}, nil, nil, fmt.Errorf("%w: rank %d says: %s", ErrRefused, h.from, reason)
}
