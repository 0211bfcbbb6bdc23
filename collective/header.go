package collective

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// Kind names a collective operation.
type Kind uint8

// The operations a communicator runs. The zero value is invalid.
const (
	kindInvalid Kind = iota
	KindAllReduce
	KindBroadcast
	KindReduce
	KindAllGather
	KindReduceScatter
	KindAllToAll
	KindAllToAllV
	KindGather
	KindScatter
	KindBarrier
	KindSendRecv
	KindSplit
	numKinds
)

var kindNames = [numKinds]string{"invalid", "AllReduce", "Broadcast", "Reduce", "AllGather",
	"ReduceScatter", "AllToAll", "AllToAllV", "Gather", "Scatter", "Barrier", "Send/Recv", "Split"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// header is the description of an operation that each rank sends ahead of
// its first message to each peer, so that ranks which called different
// operations find out and say so instead of hanging or mixing bytes.
//
// Wire form (little endian): magic, version, kind, dtype, op, algorithm,
// flags, channels, then root (i32), chunk (u32), count (u64) and
// pairCount (u64): headerLen bytes. With flagCarries set, the pair's first
// data message (at most inlineBytesMax bytes) follows in the same message.
type header struct {
	kind      Kind
	dt        dtype.DataType
	op        reduce.Op
	algo      Algorithm
	root      int32
	chunk     uint32 // chunk size in bytes, where the algorithm uses one
	channels  uint8  // rings a ring AllReduce runs on (Config.Channels' effect); else 0
	count     uint64 // the operation's element count (as the API defines it)
	pairCount uint64 // elements this pair exchanges, where it differs per pair
	carries   bool   // the message also carries the pair's first data message
	setUp     bool   // a board call that sets the board up (boardEnter): see boardReset
	determ    bool   // an AllReduce under Config.Deterministic (rank-order fold, whatever runs it)
}

const (
	headerLen   = 32
	headerMagic = 0xC0
	headerVer   = 3 // 3: up to 4064 inline bytes (2: 512)
	flagCarries = 1 // flags bit: the pair's first data message follows
	flagSetUp   = 2 // flags bit: a board call that sets the board up
	flagDeterm  = 4 // flags bit: an AllReduce under Config.Deterministic
)

// inlineBytesMax is the largest first data message of a pair that travels
// in the header's message instead of in a message of its own; a header
// message is at most headerMsgMax bytes: one page, and shared memory's
// largest message carried in its rings (shm.EagerMax), so that a small
// collective (an AllReduce, Broadcast or AllToAll up to about 4 KiB a
// pair) sends one message per pair and round, not two.
const (
	headerMsgMax   = 4096
	inlineBytesMax = headerMsgMax - headerLen
)

// marshal writes h into the first headerLen bytes of b.
func (h *header) marshal(b []byte) {
	_ = b[headerLen-1]
	b[0], b[1] = headerMagic, headerVer
	b[2], b[3], b[4], b[5] = byte(h.kind), byte(h.dt), byte(h.op), byte(h.algo)
	b[6], b[7] = 0, h.channels
	if h.carries {
		b[6] = flagCarries
	}
	if h.setUp {
		b[6] |= flagSetUp
	}
	if h.determ {
		b[6] |= flagDeterm
	}
	binary.LittleEndian.PutUint32(b[8:], uint32(h.root))
	binary.LittleEndian.PutUint32(b[12:], h.chunk)
	binary.LittleEndian.PutUint64(b[16:], h.count)
	binary.LittleEndian.PutUint64(b[24:], h.pairCount)
}

// parseHeader decodes a header message: the header and, when it carries
// one, the pair's first data message (which aliases b).
func parseHeader(b []byte) (header, []byte, error) {
	if len(b) < headerLen || b[0] != headerMagic {
		return header{}, nil, fmt.Errorf("not an operation header (%d bytes); the peer is not running a matching gocoll operation", len(b))
	}
	if b[1] != headerVer {
		return header{}, nil, fmt.Errorf("operation header version %d, want %d: mixed gocoll versions", b[1], headerVer)
	}
	if b[6]&^(flagCarries|flagSetUp|flagDeterm) != 0 {
		return header{}, nil, fmt.Errorf("operation header with unknown flags %#x", b[6])
	}
	carries := b[6]&flagCarries != 0
	switch {
	case !carries && len(b) != headerLen:
		return header{}, nil, fmt.Errorf("operation header of %d bytes, want %d", len(b), headerLen)
	case len(b) > headerMsgMax:
		return header{}, nil, fmt.Errorf("operation header carries %d bytes, at most %d allowed", len(b)-headerLen, inlineBytesMax)
	}
	var inline []byte
	if carries {
		inline = b[headerLen:]
	}
	return header{carries: carries, setUp: b[6]&flagSetUp != 0, determ: b[6]&flagDeterm != 0,
		kind:      Kind(b[2]),
		dt:        dtype.DataType(b[3]),
		op:        reduce.Op(b[4]),
		algo:      Algorithm(b[5]),
		root:      int32(binary.LittleEndian.Uint32(b[8:])),
		chunk:     binary.LittleEndian.Uint32(b[12:]),
		channels:  b[7],
		count:     binary.LittleEndian.Uint64(b[16:]),
		pairCount: binary.LittleEndian.Uint64(b[24:]),
	}, inline, nil
}

// describe prints the header the way a user called the operation.
func (h header) describe() string {
	var parts []string
	parts = append(parts, fmt.Sprintf("count=%d", h.count))
	if h.dt != dtype.Invalid {
		parts = append(parts, "dtype="+h.dt.String())
	}
	if h.op != reduce.InvalidOp {
		parts = append(parts, "op="+h.op.String())
	}
	if h.root >= 0 {
		parts = append(parts, fmt.Sprintf("root=%d", h.root))
	}
	return fmt.Sprintf("%s(%s)", h.kind, strings.Join(parts, ", "))
}

// mismatch compares this rank's header with a peer's and returns an error
// naming every field that differs, or nil.
func mismatch(mine header, myRank int, theirs header, peer int) error {
	var diffs []string
	add := func(field string, a, b any) { diffs = append(diffs, fmt.Sprintf("%s %v vs %v", field, a, b)) }
	if mine.kind != theirs.kind {
		add("operation", mine.kind, theirs.kind)
	}
	if mine.count != theirs.count {
		add("count", mine.count, theirs.count)
	}
	if mine.dt != theirs.dt {
		add("dtype", mine.dt, theirs.dt)
	}
	if mine.op != theirs.op {
		add("op", mine.op, theirs.op)
	}
	if mine.root != theirs.root {
		add("root", mine.root, theirs.root)
	}
	if mine.pairCount != theirs.pairCount {
		add("elements this rank expects from the peer vs the peer sends", mine.pairCount, theirs.pairCount)
	}
	if mine.algo != theirs.algo {
		add("algorithm", mine.algo, theirs.algo)
	}
	if mine.chunk != theirs.chunk {
		add("chunk bytes", mine.chunk, theirs.chunk)
	}
	if mine.channels != theirs.channels {
		add("channels (Config.Channels)", mine.channels, theirs.channels)
	}
	if mine.determ != theirs.determ {
		add("deterministic (Config.Deterministic)", mine.determ, theirs.determ)
	}
	if mine.setUp != theirs.setUp {
		add("sets the board up (an earlier set-up call failed on some ranks only: every rank sets it up again)", mine.setUp, theirs.setUp)
	}
	if len(diffs) == 0 {
		return nil
	}
	return &MismatchError{Rank: myRank, Peer: peer, Mine: mine.describe(), Theirs: theirs.describe(), Diffs: diffs,
		setUp: mine.setUp != theirs.setUp}
}

// MismatchError reports that two ranks called different operations (or the
// same operation with different arguments) at the same point.
type MismatchError struct {
	Rank, Peer   int      // the two ranks, in the communicator
	Mine, Theirs string   // what each called
	Diffs        []string // the fields that differ, "field mine vs theirs"
	setUp        bool     // one of the two was setting the board up (boardReset)
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("collective mismatch: rank %d called %s but rank %d called %s (%s)",
		e.Rank, e.Mine, e.Peer, e.Theirs, strings.Join(e.Diffs, "; "))
}
