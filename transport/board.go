package transport

import "context"

// Boards is implemented by endpoints that can give a group of ranks
// shared-memory boards: per rank, regions of memory that the rank writes
// and every other rank of the group maps and reads, for the collectives'
// one-round small algorithms (collective's board.go). Wrappers of an
// endpoint forward it, as they do Traits.
type Boards interface {
	// BoardHost returns the boards shared by ranks (endpoint ranks, this
	// rank among them), or nil unless every one of them is reached
	// through one transport that has boards.
	BoardHost(ranks []int) BoardHost
}

// BoardHostOf returns ep's BoardHost for ranks, or nil if it has none.
func BoardHostOf(ep Endpoint, ranks []int) BoardHost {
	if b, ok := ep.(Boards); ok {
		return b.BoardHost(ranks)
	}
	return nil
}

// BoardHost is a transport's set of boards: each rank owns a fixed number
// of boards of BoardBytes each, claims one per group that uses it, and
// reads the boards its peers claimed (their indices travel by other
// means). Every method is safe for concurrent use.
type BoardHost interface {
	// BoardBytes is the size of every board, the same on every rank of
	// the world; 8-byte words at multiples of 8 may be used atomically.
	BoardBytes() int
	// Claim reserves one of this rank's boards and returns its index,
	// or -1 if every one is taken. Its contents are whatever its last
	// user left.
	Claim() int
	// Release gives back a board Claim returned.
	Release(index int)
	// Board returns rank's board index, mapped in this process, or nil
	// if rank is not reached through this host or index is out of
	// range. After the endpoint closes it still reads and writes
	// harmlessly (zeroed private memory), never faults.
	Board(rank, index int) []byte
	// Down returns why rank can no longer be reached (it closed, its
	// process exited, or this endpoint closed), or nil.
	Down(rank int) error
	// Ended returns the error op ended with on this rank (an Abort here
	// or from a peer), or nil.
	Ended(op OpKey) error
	// Spin calls done, polling as the transport's own waits do (yielding
	// the processor between polls, so that the ranks waited for run on a
	// host with more ranks than cores), until it reports true, ctx ends
	// or the transport's spin budget is spent; it reports done's last
	// answer.
	Spin(ctx context.Context, done func() bool) bool
	// SpinLong is Spin with a second budget, for a wait that another
	// rank's copy of a board slot's data ends (a Broadcast above the
	// ring's size, an AllToAll): where the transport chose a short spin by default
	// because the host's ranks outnumber its processors, SpinLong spins
	// for the transport's longer default instead (a sleep there costs a
	// wake-up that, on such a host, waits for a core); where the spin
	// budget was set, or not shortened, it is Spin.
	SpinLong(ctx context.Context, done func() bool) bool
}
