package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// frameKind is the first byte of every frame header.
type frameKind uint8

const (
	// kindData is an eager message: header plus the whole message as body.
	kindData frameKind = 1 + iota
	// kindRTS is a request to send a rendezvous message of arg bytes.
	kindRTS
	// kindCTS answers an RTS (flags: ctsOK, ctsTruncated or ctsAborted).
	kindCTS
	// kindRData carries body bytes of rendezvous message msgID at offset
	// arg; with flag rdataWithdrawn it ends the message unsent instead.
	kindRData
	// kindCredit returns arg bytes of eager credit to the sender.
	kindCredit
	// kindAbort tells the peer that operation tag.OpKey was aborted; the
	// body is the reason's text.
	kindAbort
	kindLimit // first invalid kind
)

// CTS statuses (flags of a kindCTS frame).
const (
	ctsOK        = 0 // send the data
	ctsTruncated = 1 // the matched receive buffer is too small
	ctsAborted   = 2 // the operation has ended at the receiver (aborted)
)

// rdataWithdrawn is the flag of a kindRData frame that ends a message whose
// send was cancelled or aborted.
const rdataWithdrawn = 1

// headerLen is the encoded size of a frame header.
const headerLen = 44

// header is a decoded frame header. Layout (little endian):
//
//	0  kind  u8     1 flags u8     2 reserved u16 (zero)
//	4  seq   u32    8 comm  u64   16 op  u64
//	24 msgID u64   32 arg   u64   40 body u32 (bytes that follow)
type header struct {
	kind  frameKind
	flags uint8
	tag   transport.Tag
	msgID uint64 // sender's message number (RTS, CTS, RData)
	arg   uint64 // message length (Data, RTS), offset (RData), bytes (Credit)
	body  uint32
}

// errProtocol marks a frame or handshake that breaks the protocol.
var errProtocol = errors.New("tcp: protocol error")

// appendHeader appends h's encoding to b.
func appendHeader(b []byte, h header) []byte {
	b = append(b, byte(h.kind), h.flags, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, h.tag.Seq)
	b = binary.LittleEndian.AppendUint64(b, h.tag.Comm)
	b = binary.LittleEndian.AppendUint64(b, h.tag.Op)
	b = binary.LittleEndian.AppendUint64(b, h.msgID)
	b = binary.LittleEndian.AppendUint64(b, h.arg)
	return binary.LittleEndian.AppendUint32(b, h.body)
}

// parseHeader decodes and checks one header from b, which must hold at
// least headerLen bytes. Errors wrap errProtocol.
func parseHeader(b []byte) (header, error) {
	if len(b) < headerLen {
		return header{}, fmt.Errorf("%w: short header (%d bytes)", errProtocol, len(b))
	}
	h := header{
		kind:  frameKind(b[0]),
		flags: b[1],
		tag: transport.Tag{
			Seq: binary.LittleEndian.Uint32(b[4:]),
			OpKey: transport.OpKey{
				Comm: binary.LittleEndian.Uint64(b[8:]),
				Op:   binary.LittleEndian.Uint64(b[16:]),
			},
		},
		msgID: binary.LittleEndian.Uint64(b[24:]),
		arg:   binary.LittleEndian.Uint64(b[32:]),
		body:  binary.LittleEndian.Uint32(b[40:]),
	}
	if b[2] != 0 || b[3] != 0 {
		return header{}, fmt.Errorf("%w: reserved header bytes not zero", errProtocol)
	}
	if err := h.check(); err != nil {
		return header{}, fmt.Errorf("%w: %s frame: %v", errProtocol, h.kind, err)
	}
	return h, nil
}

// check verifies the fields of h against its kind.
func (h header) check() error {
	flagsMax, bodyMax := uint8(0), uint32(0)
	switch h.kind {
	case kindData:
		bodyMax = MaxEagerLimit
		if uint64(h.body) != h.arg {
			return fmt.Errorf("body %d != length %d", h.body, h.arg)
		}
	case kindRTS:
		if h.arg > MaxMessageBytes {
			return fmt.Errorf("length %d over %d", h.arg, uint64(MaxMessageBytes))
		}
	case kindCTS:
		flagsMax = ctsAborted
	case kindRData:
		flagsMax, bodyMax = rdataWithdrawn, MaxChunkBytes
		if h.arg > MaxMessageBytes || h.arg+uint64(h.body) > MaxMessageBytes {
			return fmt.Errorf("offset %d + body %d over %d", h.arg, h.body, uint64(MaxMessageBytes))
		}
		if h.flags == rdataWithdrawn && h.body != 0 {
			return errors.New("withdrawn frame with a body")
		}
	case kindCredit:
		if h.arg == 0 || h.arg > MaxMessageBytes {
			return fmt.Errorf("credit %d out of range", h.arg)
		}
	case kindAbort:
		bodyMax = MaxReasonBytes
	default:
		return errors.New("unknown kind")
	}
	if h.flags > flagsMax {
		return fmt.Errorf("flags %#x", h.flags)
	}
	if h.body > bodyMax {
		return fmt.Errorf("body %d over %d", h.body, bodyMax)
	}
	if h.kind != kindRTS && h.kind != kindCTS && h.kind != kindRData && h.msgID != 0 {
		return fmt.Errorf("message id %d on a frame without one", h.msgID)
	}
	return nil
}

func (k frameKind) String() string {
	names := [...]string{"invalid", "data", "rts", "cts", "rdata", "credit", "abort"}
	if k < kindLimit {
		return names[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}
