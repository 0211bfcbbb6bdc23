package collective

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
)

// Algorithm selects how an operation moves data.
type Algorithm uint8

// Algorithms. AlgoAuto lets the communicator choose by message size.
const (
	AlgoAuto Algorithm = iota
	AlgoRing
	AlgoRecursiveDoubling // AllReduce for small messages: log2(n) rounds
	AlgoChain             // Broadcast/Reduce for large messages: a pipelined chain
	AlgoBinomial          // Broadcast/Reduce for small messages: a binomial tree
	AlgoPairwise          // AllToAll: n-1 rounds of pairwise exchange
	AlgoDissemination     // Barrier
	AlgoDirect            // Gather/Scatter/Send/Recv: straight to or from the peer
	AlgoTree              // AllReduce/Broadcast/Reduce: pipelined double binary tree
	AlgoHierarchical      // AllReduce, ReduceScatter, AllGather, Broadcast: per host, then across hosts and sites
	AlgoBoard             // AllReduce, Broadcast, AllToAll, Barrier on one host: one round on shared-memory boards (board.go)
	numAlgos
)

var algoNames = [numAlgos]string{"auto", "ring", "recursive-doubling", "chain", "binomial", "pairwise", "dissemination", "direct", "tree", "hierarchical", "board"}

func (a Algorithm) String() string {
	if a < numAlgos {
		return algoNames[a]
	}
	return fmt.Sprintf("algo(%d)", uint8(a))
}

// ParseAlgorithm returns the Algorithm named s.
func ParseAlgorithm(s string) (Algorithm, error) {
	for a := AlgoAuto; a < numAlgos; a++ {
		if algoNames[a] == s {
			return a, nil
		}
	}
	return AlgoAuto, fmt.Errorf("collective: unknown algorithm %q", s)
}

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
	// DefaultBoardBlockBytes (16 KiB: an AllToAll of 64 KiB at 4 ranks
	// took 33-37 us a call on the board, 65-72 us pairwise); at most
	// BoardBytesMax; negative: never.
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
	DefaultBoardBlockBytes     = 16 << 10
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

// ErrClosed is returned by every operation on a closed communicator.
var ErrClosed = errors.New("collective: communicator closed")

// Comm is a communicator: a group of ranks that run collectives together.
// Every member must issue the same collectives in the same order (as with
// NCCL and MPI); the async forms let them overlap in flight. Methods are safe
// for concurrent use, but concurrent calls on one communicator are ordered
// by when they take their sequence number, which must agree across ranks.
type Comm struct {
	ep    transport.Endpoint
	id    uint64
	ranks []int // communicator rank -> endpoint rank
	rank  int   // this rank in the communicator
	cfg   Config
	owned io.Closer          // closed by Close, if set
	topo  *topology.Topology // by communicator rank, or nil
	// shared: the endpoint reports shared memory (transport.Traits), so
	// auto picks the direct algorithms for large messages.
	shared bool
	// headRecv is ep where it takes a message and the one sent with it in
	// one request (transport.HeadReceiver; see operation.recv), else nil.
	headRecv transport.HeadReceiver

	mu       sync.Mutex
	closed   bool
	nextOp   uint64
	splits   uint64
	p2pSent  []uint64 // user Send count per peer
	p2pRecvd []uint64 // user Recv count per peer

	abort   abortState  // Abort's (abort.go), under mu
	eager   eagerState  // the steady state and a deferred call (eager.go), under mu
	shrinks uint64      // Shrink calls so far, under mu (shrink.go)
	lean    *leanRecord // its latest lean Broadcast, under mu (boardlean.go)

	scratch scratchPool
	flight  *flightRecorder // shared with the communicators Split makes
	stalls  stallState      // its last stall report (stall.go)
	choices sync.Map        // automatic algorithms by choiceKey (choose.go)
	shapes  shapeCache      // the trees' shapes, read-only once made (shapes.go)
	// hostsSpan is 0 until spansHosts has looked, then 1 for one host, 2
	// for several (choose.go).
	hostsSpan atomic.Int32
	// board is the communicator's shared-memory board (board.go).
	board boardState
	// operations keeps this communicator's ended operations for reuse
	// (op.go's release), so that a steady stream of small collectives
	// allocates no operation (about 1.5 KiB with its per-peer state) and
	// no timer. It is per communicator, not global, because a kept timer
	// belongs to the goroutines that made it: a timer made outside a
	// testing/synctest bubble and reused inside one is not durably
	// blocking, and the bubble's virtual clock never advanced
	// (TestVirtualTimeCollectives hung in CI).
	operations sync.Pool
}

// New returns the world communicator over ep: every rank of the endpoint's
// world, in endpoint rank order. Every rank must call New with an equal id
// (any value; it separates communicators that share an endpoint) and an
// equal Config.
func New(ep transport.Endpoint, id uint64, cfg Config) (*Comm, error) {
	if ep == nil {
		return nil, errors.New("collective: nil endpoint")
	}
	ranks := make([]int, ep.Size())
	for i := range ranks {
		ranks[i] = i
	}
	topo, err := worldTopology(cfg.Topology, len(ranks))
	if err != nil {
		return nil, err
	}
	c, err := newComm(ep, id, ranks, ep.Rank(), cfg)
	if err != nil {
		return nil, err
	}
	c.topo = topo
	return c, nil
}

// NewOwning is New, and Close of the returned communicator also closes c
// (Abort: c's Abort method if it has one). If c is a [Membership], it
// supplies Config.Store and Config.Dead where cfg leaves them unset.
func NewOwning(ep transport.Endpoint, id uint64, cfg Config, c io.Closer) (*Comm, error) {
	comm, err := New(ep, id, cfg)
	if err != nil {
		return nil, err
	}
	comm.owned = c
	comm.cfg = withMembership(comm.cfg, c)
	return comm, nil
}

func newComm(ep transport.Endpoint, id uint64, ranks []int, rank int, cfg Config) (*Comm, error) {
	traits := transport.TraitsOf(ep)
	cfg, err := cfg.withDefaults(traits)
	if err != nil {
		return nil, err
	}
	c := &Comm{ep: ep, id: id, ranks: ranks, rank: rank, cfg: cfg, shared: traits.SharedMemory,
		p2pSent: make([]uint64, len(ranks)), p2pRecvd: make([]uint64, len(ranks))}
	c.headRecv, _ = ep.(transport.HeadReceiver)
	c.scratch.size = cfg.ChunkBytes
	c.flight = new(flightRecorder)
	c.initBoard()
	noteMembers(ep, id, ranks) // shrink.go
	return c, nil
}

// Rank is this process's rank in the communicator, in [0, Size).
func (c *Comm) Rank() int { return c.rank }

// Size is the number of ranks in the communicator.
func (c *Comm) Size() int { return len(c.ranks) }

// ID is the communicator's id, equal on every member.
func (c *Comm) ID() uint64 { return c.id }

// Config returns the communicator's configuration, defaults filled in.
func (c *Comm) Config() Config { return c.cfg }

// Close ends the communicator: later operations fail with ErrClosed.
// Operations already issued run to completion. Close is idempotent.
// It first settles a call that returned early (eager.go; bounded by that
// call's deadline), and returns its error, if any, after closing.
func (c *Comm) Close() error {
	c.mu.Lock()
	was := c.closed
	c.closed = true // first: an eager call still in its body now ends inline (deferEnd)
	released := c.abort.released
	c.mu.Unlock()
	settled := c.settleDeferred(context.Background(), nil)
	if was {
		return settled
	}
	if c.board.host != nil && settled == nil {
		settled = firstErr(c.board.rootFailed(c), c.closeVerify()) // eager Broadcasts on the board
	}
	c.closeBoard()
	c.leanClose()
	if c.owned != nil && !released {
		return errors.Join(settled, c.owned.Close())
	}
	return settled
}

// NoColor passed to Split leaves the caller out of every new communicator.
const NoColor = -1

// Split partitions the communicator: ranks that pass the same color form a
// new communicator, ordered by key and then by rank here (like
// ncclCommSplit and MPI_Comm_split). A rank passing NoColor gets nil. Split
// is a collective: every rank must call it.
//
// A color below NoColor is an error on every rank: the check runs inside
// the operation, so the rank that made it aborts the Split on the others
// and every rank stays in step.
func (c *Comm) Split(ctx context.Context, color, key int) (*Comm, error) {
	c.mu.Lock()
	seq := c.splits
	c.splits++
	c.mu.Unlock()

	var bad error
	if color < NoColor {
		bad = fmt.Errorf("Split color %d is negative (NoColor is %d)", color, NoColor)
	}
	mine := []int64{int64(color), int64(key)}
	all := make([]int64, 2*c.Size())
	if err := c.splitGather(ctx, bad, asBytes(mine), asBytes(all)); err != nil {
		return nil, fmt.Errorf("collective: Split: %w", err)
	}
	if color == NoColor {
		return nil, nil
	}
	members := splitMembers(all, color)
	ranks := make([]int, len(members))
	newRank := -1
	for i, m := range members {
		ranks[i] = c.ranks[m]
		if m == c.rank {
			newRank = i
		}
	}
	sub, err := newComm(c.ep, splitID(c.id, seq, color), ranks, newRank, c.cfg)
	if err != nil {
		return nil, err
	}
	sub.topo = subTopology(c.topo, members)
	sub.flight = c.flight
	return sub, nil
}

// splitGather gathers every rank's send into recv, as the Split
// operation; a non-nil bad (this rank's invalid argument) fails it, here
// and, through its abort, on every other rank.
func (c *Comm) splitGather(ctx context.Context, bad error, send, recv []byte) error {
	h := header{kind: KindSplit, dt: dtype.Uint8, root: -1, count: uint64(len(send)), algo: AlgoRing, chunk: uint32(c.cfg.ChunkBytes)}
	return c.launch(ctx, h, nil, true, func(o *operation) error {
		if bad != nil {
			return bad
		}
		copy(recv[c.rank*len(send):], send)
		if c.Size() == 1 {
			return nil
		}
		return c.allGatherRing(o, recv, len(send), 1)
	}).err
}

// splitMembers returns the parent ranks with the given color, sorted by
// (key, parent rank). all holds (color, key) pairs by parent rank.
func splitMembers(all []int64, color int) []int {
	var members []int
	for r := 0; r < len(all)/2; r++ {
		if all[2*r] == int64(color) {
			members = append(members, r)
		}
	}
	// Stable, so equal keys keep parent rank order.
	slices.SortStableFunc(members, func(a, b int) int { return cmp.Compare(all[2*a+1], all[2*b+1]) })
	return members
}

func splitID(parent, seq uint64, color int) uint64 {
	h := fnv.New64a()
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], parent)
	binary.LittleEndian.PutUint64(b[8:], seq)
	binary.LittleEndian.PutUint64(b[16:], uint64(color))
	h.Write(b[:])
	return h.Sum64()
}

// take reserves the next operation sequence number, and counts the call
// as begun (eagerState.enter: until its end), or fails if closed; a
// board call also takes its ticket (board.go).
func (c *Comm) take(board bool) (seq, order, ticket uint64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.abort.err != nil {
		return 0, 0, 0, c.abort.err
	}
	if c.closed {
		return 0, 0, 0, ErrClosed
	}
	n := c.nextOp
	c.nextOp++
	if board {
		ticket = c.board.takeTicket()
	}
	return n, c.eager.enter(), ticket, nil
}

// commRank returns the communicator rank of endpoint rank ep (or ep itself
// if it is not a member, which only an error message would show).
func (c *Comm) commRank(ep int) int {
	for i, r := range c.ranks {
		if r == ep {
			return i
		}
	}
	return ep
}
