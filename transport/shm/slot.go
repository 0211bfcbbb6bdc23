package shm

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gocoll/gocoll/transport"
)

// Slot kinds.
const (
	kindInline     uint8 = 1 + iota // a message carried in the slot
	kindRendezvous                  // a message left in the sender's memory
	_                               // once FIN: a receiver now says it copied in the send's word (peer.copied)
	kindAbort                       // the sender ended an operation
	kindBye                         // the sender closed its endpoint
	kindHello                       // the sender has connected to every rank
)

// proofLen is the size of a hello's proof of the job key (auth.go).
const proofLen = 16

// slotHeadBytes is the fixed part of a slot; the rest carries an inline
// message or an abort reason.
const slotHeadBytes = 64

// slot is one decoded ring slot. Its layout, little endian:
//
//	0   kind      u8
//	4   inlineLen u32   bytes used of the inline area
//	8   length    u64   message length
//	16  comm      u64   tag
//	24  op        u64
//	32  seq       u32
//	36  headSeq   u32   rendezvous with a head: the head message's seq
//	40  sendID    u64   rendezvous: the send's id in its sender's table
//	48  addr      u64   rendezvous: address of the message in the sender
//	64  inline    [InlineMax]byte
//
// An inline message longer than InlineMax (at most EagerMax) fills the
// first slot's inline area and goes on in the following slots, whole
// SlotBytes each, published together with it. A rendezvous slot's inline
// area may carry a head (Endpoint.SendWithHead): a message of its own, of
// the same operation with seq headSeq, sent before the rendezvous one.
type slot struct {
	kind    uint8
	tag     transport.Tag
	length  uint64
	headSeq uint32
	sendID  uint64
	addr    uint64
	inline  []byte // after decode it aliases the ring: copy what is kept
}

var errBadSlot = errors.New("shm: malformed slot")

// encode writes s into b, which holds SlotBytes bytes.
func (s *slot) encode(b []byte) {
	_ = b[SlotBytes-1]
	b[0] = s.kind
	binary.LittleEndian.PutUint32(b[4:], uint32(len(s.inline)))
	binary.LittleEndian.PutUint64(b[8:], s.length)
	binary.LittleEndian.PutUint64(b[16:], s.tag.Comm)
	binary.LittleEndian.PutUint64(b[24:], s.tag.Op)
	binary.LittleEndian.PutUint32(b[32:], s.tag.Seq)
	binary.LittleEndian.PutUint32(b[36:], s.headSeq)
	binary.LittleEndian.PutUint64(b[40:], s.sendID)
	binary.LittleEndian.PutUint64(b[48:], s.addr)
	copy(b[slotHeadBytes:], s.inline)
}

// decodeSlot parses the SlotBytes bytes of b. The slot came from another
// process, so every field is checked against what its kind allows.
func decodeSlot(b []byte) (slot, error) {
	if len(b) != SlotBytes {
		return slot{}, fmt.Errorf("%w: %d bytes", errBadSlot, len(b))
	}
	s := slot{
		kind:   b[0],
		length: binary.LittleEndian.Uint64(b[8:]),
		tag: transport.Tag{
			OpKey: transport.OpKey{Comm: binary.LittleEndian.Uint64(b[16:]), Op: binary.LittleEndian.Uint64(b[24:])},
			Seq:   binary.LittleEndian.Uint32(b[32:]),
		},
		headSeq: binary.LittleEndian.Uint32(b[36:]),
		sendID:  binary.LittleEndian.Uint64(b[40:]),
		addr:    binary.LittleEndian.Uint64(b[48:]),
	}
	n := binary.LittleEndian.Uint32(b[4:])
	if n > InlineMax {
		return slot{}, fmt.Errorf("%w: inline length %d", errBadSlot, n)
	}
	s.inline = b[slotHeadBytes : slotHeadBytes+int(n)]
	switch s.kind {
	case kindInline:
		if s.length != uint64(n) && (n != InlineMax || s.length <= InlineMax || s.length > EagerMax) {
			return slot{}, fmt.Errorf("%w: inline message of %d bytes carries %d", errBadSlot, s.length, n)
		}
	case kindRendezvous:
		if s.length <= InlineMax || s.length > maxMessageBytes || s.addr == 0 {
			return slot{}, fmt.Errorf("%w: rendezvous of %d bytes at %#x", errBadSlot, s.length, s.addr)
		}
	case kindHello:
		if n != 0 && n != proofLen {
			return slot{}, fmt.Errorf("%w: hello with %d inline bytes", errBadSlot, n)
		}
	case kindBye:
		if n != 0 {
			return slot{}, fmt.Errorf("%w: kind %d with %d inline bytes", errBadSlot, s.kind, n)
		}
	case kindAbort:
	default:
		return slot{}, fmt.Errorf("%w: kind %d", errBadSlot, s.kind)
	}
	return s, nil
}

// encodeSlots returns s as the slots it takes in a ring, one after another.
func encodeSlots(s *slot) []byte {
	b := make([]byte, s.slots()*SlotBytes)
	s.encodeSlots(func(i int) []byte { return b[i*SlotBytes : (i+1)*SlotBytes] })
	return b
}

// slots is the number of ring slots s takes: one, and the continuation
// slots of a long inline message.
func (s *slot) slots() int {
	if s.kind == kindInline {
		return 1 + contSlots(int(s.length))
	}
	return 1
}

// encodeSlots writes s into its s.slots() slots, at(i) being slot i: the
// head and the first InlineMax bytes of the message, then the rest of it
// SlotBytes at a time.
func (s *slot) encodeSlots(at func(i int) []byte) {
	msg := s.inline
	first := *s
	first.inline = msg[:min(len(msg), InlineMax)]
	first.encode(at(0))
	for i, rest := 1, msg[len(first.inline):]; len(rest) > 0; i++ {
		rest = rest[copy(at(i), rest):]
	}
}

// sendWordOf splits a rendezvous send id into the index of its word in
// the sender's table and the generation the word was posted under.
func sendWordOf(id uint64) (index int, gen uint64) { return int(id & 0xffffffff), id >> 32 }

// sendIDOf is the send id of word index posted under generation gen.
func sendIDOf(index int, gen uint64) uint64 { return gen<<32 | uint64(index) }

// contSlots is the number of continuation slots after the first slot of an
// inline message of n bytes.
func contSlots(n int) int {
	if n <= InlineMax {
		return 0
	}
	return (n - InlineMax + SlotBytes - 1) / SlotBytes
}

// maxMessageBytes is the longest message a rendezvous slot may announce.
const maxMessageBytes = 1 << 46
