package collective

import (
	"fmt"
	"time"

	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
)

// Config tunes a communicator. The zero value gives the defaults; every
// field must be set identically on every rank (the operation headers check
// the ones that change the wire traffic).
type Config struct {
	// ChunkBytes is the pipelining unit of ring and chain algorithms.
	// Default: the transport's transport.Traits.ChunkBytes where it has one
	// (MetaRoCE: 2 MiB), else 512 KiB; range [4 KiB, 64 MiB].
	ChunkBytes int
	// PipelineDepth is the fewest chunk receives a ring keeps posted
	// ahead (rings post a whole step's chunks, up to 32 MiB of them, so
	// that a neighbour running ahead lands in place), and so of the
	// chunk-sized scratch buffers a reducing ring holds; chains keep this
	// many chunks in flight. Default 4; range [1, 64].
	PipelineDepth int
	// BoardBytes is the size at or below which AllReduce runs on the
	// communicator's shared-memory board (board.go), where it has one:
	// where every rank is on one host over shared memory and the
	// transport has a board free for it (shm: Config.Boards), in one
	// round, each rank writing its data once and reading every other's
	// straight from its memory. Default DefaultBoardBytes; at most
	// BoardBytesMax (and what a board's slot holds: 256 KiB with shm's
	// defaults); negative: never, nor Barrier. AllReduce or Broadcast forced to
	// AlgoBoard takes the board up to what its slot holds; else, like
	// every call too large for it, it takes the point-to-point
	// algorithms. At 64 KiB, 4 ranks on 2 cores, the board folding in
	// shards (BoardSplitBytes) took 39 us a call, every rank folding
	// every buffer 55 and recursive doubling 81 (bench/results/shm_large.md);
	// at 1 MiB slots of that size were no faster than the direct algorithm.
	// Default 256 KiB (session 25, ar256): at 128 and 256 KiB the board
	// took 146-149 and 292-311 CPU-us a call over the 4 ranks against
	// the point-to-point path's 294-324 and 455-481 (perf stat, load 4),
	// and 38.6 / 79.2 us a call against 77.2 / 121.8 with --fresh.
	BoardBytes int
	// BoardSplitBytes is the size above which an AllReduce on the board
	// folds in shards, in two rounds (each rank folds an n-th of every
	// member's buffer, every rank copies the folded shards out:
	// boardreducescatter.go), rather than in one round where every rank
	// folds every member's whole buffer. Default DefaultBoardSplitBytes
	// (16 KiB: at 32 KiB, 4 ranks on 2 cores, the two took 33 and 34 us a
	// call); at most BoardBytesMax; negative: never. Every rank must have
	// the same, as for BoardRing: a communicator whose ranks differ does
	// without the board, its calls going point to point (Comm.BoardCalls
	// stays 0).
	BoardSplitBytes int
	// BoardBroadcastBytes is BoardBytes for Broadcast (eager on the
	// board: package doc). Default DefaultBoardBroadcastBytes (256 KiB,
	// the most shm's default slot holds; at 64 KiB the board took 17-20
	// us a call against the direct algorithm's 148-188; at 256 KiB, 4
	// ranks on 2 cores, 14-18 us against 24-27, and, where every call's
	// data differs, 28 against 26 at load 13-30 (bench/results/
	// shm_large.md, session 25, bcast256) but 18.7 against 25.8 in a quiet
	// run (bench/results/quiet-20261206-1853, gocoll bench --fresh); at
	// most BoardBytesMax; negative: never.
	BoardBroadcastBytes int
	// BoardRing is how many calls ahead of its slowest receiver an eager
	// root Broadcast of at most 64 bytes may run on the board: the
	// board's ring of small slots (board.go), one per call, each reused
	// once every member is done with its last call. A receiver then finds
	// many calls ready and takes them without waiting, and a receiver's
	// failure reaches the root at the latest at the call that reuses the
	// slot (package doc). A larger Broadcast runs at most 4 ahead (the
	// board's big slots). A power of two; default DefaultBoardRing (256);
	// at most BoardRingMax; negative: no ring. Every rank must have the same: a
	// communicator whose ranks differ (their boards' slots lie
	// differently) does without the board, its calls going point to
	// point (Comm.BoardCalls stays 0). The ring takes 136 bytes of the
	// board per slot, from the big slots (Comm.BoardSlotBytes): on shm's
	// default board they hold 256.3 KiB with the default ring, 262.7 KiB
	// at 64 (a smaller shm Config.BoardBytes may leave them under 256 KiB,
	// and a Broadcast too large for them then goes point to point); a
	// board too small to hold the ring besides big slots of 64 bytes of
	// data does without the ring.
	BoardRing int
	// BoardBlockBytes is the block (the bytes each rank sends each
	// other) at or below which AllToAll runs on the board, in one round
	// (as BoardBytes, where all the blocks of a rank fit a board's slot:
	// up to 64 KiB blocks at 4 ranks with shm's defaults). Default
	// DefaultBoardBlockBytes (64 KiB: an AllToAll of 64 KiB at 4 ranks
	// took 33-37 us a call on the board, 65-72 us pairwise; of 128 KiB,
	// 32 KiB blocks, 4 processes on 2 cores, medians of 5-7 interleaved
	// rounds, 47.7-63.1 us on the board against 59.7-74.4 pairwise, whose
	// three process_vm_readv a rank, each a few microseconds of fixed
	// cost here, outweigh the board's second copy of every block; of 256
	// KiB, 64 KiB blocks, the board with plain copies was 0.57x pairwise
	// in some sittings and 1.2-1.3x in others, when its copies ran 2.5x
	// slower (bench/results/shm30); with each rank choosing by timing
	// whether it writes blocks above 32 KiB past its caches
	// (boardStreamBlock), 0.85x pairwise when slow and 0.53x when fast
	// (bench/results/shm31)); at most BoardBytesMax; negative: never.
	BoardBlockBytes int
	// SmallBytes is the message size at or below which AllReduce uses
	// recursive doubling and Broadcast/Reduce a binomial tree. Default 64 KiB.
	SmallBytes int
	// AllReduce, Broadcast and Reduce force an algorithm. AlgoAuto: where
	// Topology spans hosts, the fastest in collective/tune's cost model
	// (with Topology's link figures, else assumed: tune.DefaultLinks);
	// else by size.
	AllReduce, Broadcast, Reduce Algorithm
	// ReduceScatter and AllGather force an algorithm: AlgoRing, or
	// AlgoHierarchical (per level of Topology: within each group, then
	// among the ranks of the groups that own the same blocks). AlgoAuto:
	// hierarchical where Topology spans more than one site and the
	// operation is larger than SmallBytes, else the ring.
	ReduceScatter, AllGather Algorithm
	// Deterministic makes AllReduce bitwise reproducible whatever algorithm,
	// chunk size or link figures would be chosen, for a given world size:
	// every element is reduced in one canonical order, rank order
	// (((x0 op x1) op x2) ...), by the rank that owns its segment, and the
	// result sent to every rank as it is (the direct algorithm, whose fold
	// is always that order; it overrides AllReduce's algorithm; a call the
	// shared-memory board takes runs there, whose fold is that order too).
	// Default false: each algorithm has its own order, every rank still
	// getting the same bits.
	Deterministic bool
	// Channels cuts a ring AllReduce in this many parts, each on a ring
	// of its own (a stride coprime to the world size; see channels.go),
	// all in flight at once; fewer where the world size has fewer such
	// strides or a part would be under a chunk. It cuts a tree AllReduce,
	// Broadcast or Reduce likewise, each part on a pair of trees of its
	// own (tree.go), fewer where a tree's part would be under a chunk.
	// Default (0): the count
	// (1, 2, 4, 8 or 16) the cost model predicts fastest for the topology
	// and the size where the topology spans hosts (more channels pay where
	// a level has several lanes, such as a WAN of several paths), else 1;
	// range [0, ChannelsMax].
	Channels int
	// Timeout bounds an operation whose context has no deadline. Default 10
	// minutes; a negative value is an error. Every wait has a deadline.
	Timeout time.Duration
	// StallTimeout is how long an operation runs before this rank reports
	// it as stalled (OnStall) and goes on waiting. Default
	// DefaultStallTimeout (30 s); negative: never.
	StallTimeout time.Duration
	// OnStall receives each stall report, from the stalled operation's
	// goroutine; it must not block for long. A communicator makes at most
	// one report per StallTimeout (and per second): see StallReport.
	// Default (nil): the report is written to standard error.
	OnStall func(StallReport)
	// Store, if set, is a key-value store every rank shares, through which
	// Shrink agrees on the ranks to leave out; launchers set it (the world
	// of gocoll.Init uses the job's store). Shrink fails without one.
	Store ShrinkStore
	// Dead, if set, returns the endpoint ranks that health checks have
	// declared dead; Shrink leaves them out. Launchers set it. Optional.
	Dead func() []int
	// Topology, if set, says where each rank of the world runs (host, site,
	// ...), by endpoint rank; it must have one entry per rank. Launchers set
	// it; see Comm.Topology. Optional.
	Topology *topology.Topology
}

// Limits of Config.
const (
	ChunkBytesMin    = 4 << 10
	ChunkBytesMax    = 64 << 20
	PipelineDepthMax = 64
	// DefaultBoardBytes and BoardBytesMax are Config.BoardBytes' default
	// and largest value.
	DefaultBoardBytes          = 256 << 10
	DefaultBoardBroadcastBytes = 256 << 10
	DefaultBoardBlockBytes     = 64 << 10
	DefaultBoardSplitBytes     = 16 << 10
	BoardBytesMax              = 16 << 20
	// DefaultBoardRing and BoardRingMax are Config.BoardRing's default
	// and largest value.
	DefaultBoardRing = 256
	BoardRingMax     = 256
)

// defaultChunkBytes is Config.ChunkBytes for transports without a
// preference.
const defaultChunkBytes = 512 << 10

// withDefaults fills the unset fields of c, taking the chunk size the
// transport prefers (traits) if c has none, and checks the result.
func (c Config) withDefaults(traits transport.Traits) (Config, error) {
	if c.ChunkBytes == 0 {
		c.ChunkBytes = defaultChunkBytes
		if traits.ChunkBytes >= ChunkBytesMin && traits.ChunkBytes <= ChunkBytesMax {
			c.ChunkBytes = traits.ChunkBytes
		}
	}
	if c.PipelineDepth == 0 {
		c.PipelineDepth = 4
	}
	if c.SmallBytes == 0 {
		c.SmallBytes = 64 << 10
	}
	if c.BoardBytes == 0 {
		c.BoardBytes = DefaultBoardBytes
	}
	if c.BoardBlockBytes == 0 {
		c.BoardBlockBytes = DefaultBoardBlockBytes
	}
	if c.BoardBroadcastBytes == 0 {
		c.BoardBroadcastBytes = DefaultBoardBroadcastBytes
	}
	if c.BoardRing == 0 {
		c.BoardRing = DefaultBoardRing
	}
	if c.BoardSplitBytes == 0 {
		c.BoardSplitBytes = DefaultBoardSplitBytes
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Minute
	}
	if c.StallTimeout == 0 {
		c.StallTimeout = DefaultStallTimeout
	}
	switch {
	case c.ChunkBytes < ChunkBytesMin || c.ChunkBytes > ChunkBytesMax:
		return c, fmt.Errorf("collective: ChunkBytes %d out of range [%d, %d]", c.ChunkBytes, ChunkBytesMin, ChunkBytesMax)
	case c.PipelineDepth < 1 || c.PipelineDepth > PipelineDepthMax:
		return c, fmt.Errorf("collective: PipelineDepth %d out of range [1, %d]", c.PipelineDepth, PipelineDepthMax)
	case c.SmallBytes < 0:
		return c, fmt.Errorf("collective: SmallBytes %d is negative", c.SmallBytes)
	case c.BoardBytes > BoardBytesMax:
		return c, fmt.Errorf("collective: BoardBytes %d above %d", c.BoardBytes, BoardBytesMax)
	case c.BoardBroadcastBytes > BoardBytesMax:
		return c, fmt.Errorf("collective: BoardBroadcastBytes %d above %d", c.BoardBroadcastBytes, BoardBytesMax)
	case c.BoardBlockBytes > BoardBytesMax:
		return c, fmt.Errorf("collective: BoardBlockBytes %d above %d", c.BoardBlockBytes, BoardBytesMax)
	case c.BoardRing > BoardRingMax || c.BoardRing > 0 && c.BoardRing&(c.BoardRing-1) != 0:
		return c, fmt.Errorf("collective: BoardRing %d: want a power of two, at most %d", c.BoardRing, BoardRingMax)
	case c.BoardSplitBytes > BoardBytesMax:
		return c, fmt.Errorf("collective: BoardSplitBytes %d above %d", c.BoardSplitBytes, BoardBytesMax)
	case c.Channels < 0 || c.Channels > ChannelsMax:
		return c, fmt.Errorf("collective: Channels %d out of range [0, %d]", c.Channels, ChannelsMax)
	case c.Timeout < 0:
		return c, fmt.Errorf("collective: Timeout %v is negative", c.Timeout)
	}
	for _, a := range []Algorithm{c.AllReduce, c.Broadcast, c.Reduce, c.ReduceScatter, c.AllGather} {
		if a >= numAlgos {
			return c, fmt.Errorf("collective: unknown algorithm %d", a)
		}
	}
	return c, nil
}
