package collective

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
)

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
