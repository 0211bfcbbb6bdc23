package mrtransport

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// msgKey is a core message key: the (stream, msg) pair that matches a
// message to its receive on one connection.
type msgKey struct{ stream, msg uint64 }

// Key mapping. A data message with tag {Comm, Op, Seq} has
//
//	stream = Comm
//	msg    = (Op mod 2^31) << 32 | Seq
//
// so the top bit of msg is always 0; control messages (aborts) have it
// set: stream 0, msg = 1<<63 | n, where n counts the control messages sent
// on the connection. The mapping is one-to-one except that operations
// whose Op differ by a multiple of 2^31 share keys; two such operations
// must not have messages in flight between the same two ranks at once
// (a communicator would need two billion operations in flight).
//
// The core requires a key to be unique among a connection's messages in
// flight, but the transport contract lets a caller send several messages
// with one tag (matched in order). So messages with one key are serialized
// per connection and direction: the next is handed to the core only when
// the one before it has completed (queue).
const (
	opBits  = 31
	opMask  = 1<<opBits - 1
	ctrlBit = 1 << 63
)

func dataKey(t transport.Tag) msgKey {
	return msgKey{t.Comm, (t.Op&opMask)<<32 | uint64(t.Seq)}
}

func ctrlKey(n uint64) msgKey { return msgKey{0, ctrlBit | n&^ctrlBit} }

func (k msgKey) isCtrl() bool { return k.msg&ctrlBit != 0 }

// opOf returns the key's operation as far as the key tells it: the
// communicator and the low opBits bits of Op.
func (k msgKey) opOf() opLow { return opLow{k.stream, k.msg >> 32 & opMask} }

// opLow is an operation known by its communicator and the low bits of its
// Op, as recovered from a key.
type opLow struct{ comm, op uint64 }

func lowOf(op transport.OpKey) opLow { return opLow{op.Comm, op.Op & opMask} }

// Control messages. An abort travels as
//
//	byte    ctrlVersion
//	byte    ctrlAbort
//	uint64  Comm   (big endian)
//	uint64  Op
//	uint16  reason length, at most MaxReasonBytes
//	[]byte  reason text
const (
	ctrlVersion   = 1
	ctrlAbort     = 1
	ctrlHeaderLen = 2 + 8 + 8 + 2
	// ctrlMaxLen is the receive buffer of a control message.
	ctrlMaxLen = ctrlHeaderLen + MaxReasonBytes
)

// errControl reports a control message that cannot be parsed.
var errControl = errors.New("mrtransport: malformed control message")

// appendAbort appends the control message that aborts op with reason,
// cut to MaxReasonBytes.
func appendAbort(b []byte, op transport.OpKey, reason string) []byte {
	if len(reason) > MaxReasonBytes {
		reason = reason[:MaxReasonBytes]
	}
	b = append(b, ctrlVersion, ctrlAbort)
	b = binary.BigEndian.AppendUint64(b, op.Comm)
	b = binary.BigEndian.AppendUint64(b, op.Op)
	b = binary.BigEndian.AppendUint16(b, uint16(len(reason)))
	return append(b, reason...)
}

// parseAbort parses an abort control message.
func parseAbort(b []byte) (transport.OpKey, string, error) {
	if len(b) < ctrlHeaderLen {
		return transport.OpKey{}, "", fmt.Errorf("%w: %d bytes, want at least %d", errControl, len(b), ctrlHeaderLen)
	}
	if b[0] != ctrlVersion || b[1] != ctrlAbort {
		return transport.OpKey{}, "", fmt.Errorf("%w: version %d kind %d", errControl, b[0], b[1])
	}
	op := transport.OpKey{Comm: binary.BigEndian.Uint64(b[2:]), Op: binary.BigEndian.Uint64(b[10:])}
	n := int(binary.BigEndian.Uint16(b[18:]))
	if n > MaxReasonBytes || len(b) != ctrlHeaderLen+n {
		return transport.OpKey{}, "", fmt.Errorf("%w: reason of %d bytes in a %d-byte message", errControl, n, len(b))
	}
	return op, string(b[ctrlHeaderLen:]), nil
}
