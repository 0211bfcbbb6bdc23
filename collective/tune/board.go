package tune

// BoardOp is a collective that can run on a shared-memory board
// (collective's board.go).
type BoardOp uint8

// The board's collectives.
const (
	BoardAllReduce BoardOp = iota
	BoardBroadcast
	BoardAllToAll
	BoardBarrier
)

// OnBoard reports whether a collective of op goes on the communicator's
// board, where it has one (every rank on one host's shared memory): bytes
// is the call's buffer (AllToAll: one peer's block), ranks the
// communicator's size, limit the configuration's bound for op (negative:
// never; forced: up to what the board holds), and slotBytes the data a
// board slot holds. A board call is one round: each rank writes its part
// once and reads the others' straight from their memory, where the
// point-to-point algorithms take ceil(log2 n) rounds, each a hand-over to
// a peer that on a host with more ranks than cores must be scheduled
// first. It is a pure function of arguments every matching rank agrees on.
func OnBoard(op BoardOp, bytes, ranks, limit, slotBytes int, forced bool) bool {
	if ranks < 2 || bytes < 0 || slotBytes <= 0 || (limit < 0 && !forced) {
		return false
	}
	if op == BoardBarrier {
		return true
	}
	if !forced && bytes > limit {
		return false
	}
	if op == BoardAllToAll {
		return bytes <= slotBytes/ranks
	}
	return bytes <= slotBytes
}

// BoardSplit reports whether an AllReduce of bytes that runs on the board
// folds in shards, in two rounds (each of the ranks folds an n-th of every
// member's buffer and publishes it; every rank copies the shards out),
// rather than in one round where every rank folds every member's whole
// buffer: above splitAbove bytes (negative: never). At 4 ranks on 2 cores
// one round's (n-1)*n whole folds on the job's cores cost more than the
// second hand-over from 32 KiB on (bench/results/shm_large.md). It is a
// pure function of arguments every matching rank agrees on.
func BoardSplit(bytes, ranks, splitAbove int) bool {
	return ranks >= 2 && splitAbove >= 0 && bytes > splitAbove
}
