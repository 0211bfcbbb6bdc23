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
type header struct {
	kind      Kind
	dt        dtype.DataType
	op        reduce.Op
	algo      Algorithm
	root      int32
	chunk     uint32 // chunk size in bytes, where the algorithm uses one
	count     uint64 // the operation's element count (as the API defines it)
	pairCount uint64 // elements this pair exchanges, where it differs per pair
}

const (
	headerLen   = 32
	headerMagic = 0xC0
	headerVer   = 1
)

func (h *header) marshal(b *[headerLen]byte) {
	b[0], b[1] = headerMagic, headerVer
	b[2], b[3], b[4], b[5] = byte(h.kind), byte(h.dt), byte(h.op), byte(h.algo)
	binary.LittleEndian.PutUint32(b[8:], uint32(h.root))
	binary.LittleEndian.PutUint32(b[12:], h.chunk)
	binary.LittleEndian.PutUint64(b[16:], h.count)
	binary.LittleEndian.PutUint64(b[24:], h.pairCount)
}

func parseHeader(b []byte) (header, error) {
	if len(b) != headerLen || b[0] != headerMagic {
		return header{}, fmt.Errorf("not an operation header (%d bytes); the peer is not running a matching gocoll operation", len(b))
	}
	if b[1] != headerVer {
		return header{}, fmt.Errorf("operation header version %d, want %d: mixed gocoll versions", b[1], headerVer)
	}
	return header{
		kind:      Kind(b[2]),
		dt:        dtype.DataType(b[3]),
		op:        reduce.Op(b[4]),
		algo:      Algorithm(b[5]),
		root:      int32(binary.LittleEndian.Uint32(b[8:])),
		chunk:     binary.LittleEndian.Uint32(b[12:]),
		count:     binary.LittleEndian.Uint64(b[16:]),
		pairCount: binary.LittleEndian.Uint64(b[24:]),
	}, nil
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
	if len(diffs) == 0 {
		return nil
	}
	return &MismatchError{Rank: myRank, Peer: peer, Mine: mine.describe(), Theirs: theirs.describe(), Diffs: diffs}
}

// MismatchError reports that two ranks called different operations (or the
// same operation with different arguments) at the same point.
type MismatchError struct {
	Rank, Peer   int      // the two ranks, in the communicator
	Mine, Theirs string   // what each called
	Diffs        []string // the fields that differ, "field mine vs theirs"
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("collective mismatch: rank %d called %s but rank %d called %s (%s)",
		e.Rank, e.Mine, e.Peer, e.Theirs, strings.Join(e.Diffs, "; "))
}
