package collective

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/transport"
)

// The board. Where every rank of a communicator shares one host's memory
// (transport.BoardHost), each owns a board there that every other maps:
// small collectives run on it in one round, each rank writing its part
// into its own board once and reading the others' parts straight from
// theirs, with no message and no hand-over through a progress goroutine
// (boardallreduce.go). A rank's board:
//
//	[0, 8)      the communicator's id, written when it claimed the board
//	[8, 16)     fail: seq+1 of the last call this rank failed (0: none)
//	[16, 20)    the length of that failure's text, at [128, 512)
//	[64, 96)    ack: per slot s, x means this rank has done reading slot s
//	            of every call numbered below x (its own and its peers')
//	[512, ...)  boardSlots slots, call seq in slot seq mod boardSlots:
//	            [0, 8) seq+1, stored last; [8, 40) the call's operation
//	            header (header.marshal); from 64 the call's data.
//
// A rank writes slot s only once every member's ack of s has passed the
// last call it wrote there, so no reader sees a slot change under it. A
// rank sets its ack of s to seq when it starts call seq (it reads nothing
// older of s any more: its board calls run one at a time, in order,
// boardEnter) and to seq+1 when the call ends, failed or not; so a peer
// that took another path for a call, or failed it, still frees the slot.
// Every check a call makes on its peers (headers, failures, the abort of
// the communicator) is a load from their boards, and a wait that lasts
// runs the checks of every other wait (boardwait.go).
const (
	boardSlots     = 4
	boardCtrlBytes = 512
	boardOffFail   = 8
	boardOffTextN  = 16
	boardOffAcks   = 64
	boardOffText   = 128
	boardTextMax   = boardCtrlBytes - boardOffText
	boardSlotHead  = 64
	boardOffHeader = 8
	// boardTickets bounds the board calls running at once on a rank: it
	// is MaxRunningOps, so never reached.
	boardTickets = MaxRunningOps
)

// Board set-up phases of a communicator.
const (
	boardUntried = iota // no board call yet: the first one sets up
	boardReady          // every member holds a board
	boardNone           // some member had none free: point-to-point for good
)

// boardState is a communicator's board: its set-up, its members' boards,
// and the order of its board calls on this rank.
type boardState struct {
	host      transport.BoardHost // nil: this communicator has no boards
	slotBytes int                 // one slot, header included
	aborted   atomic.Bool         // the communicator was aborted (abortWith)
	up        atomic.Bool         // set up and ready (phase boardReady)
	calls     atomic.Uint64       // calls run on the board (BoardCalls)

	// Tickets: each board call takes the next at begin (under Comm.mu),
	// and runs only once every earlier one has ended (serving).
	next    uint64
	serving atomic.Uint64
	mu      sync.Mutex
	ended   [boardTickets]bool // by ticket mod boardTickets: ended out of order
	closeAt uint64             // Close came with this ticket's call running: its end retires the board

	// Set up by the first board call (again after a boardReset). These, and
	// everything below, are touched only by the call holding the turn
	// (serving == its ticket-1): board calls run one at a time, in order;
	// a call waiting for its turn keeps its wait in its operation (bw).
	phase   int
	index   int      // this rank's board, -1 if none
	peers   [][]byte // the members' boards, by communicator rank
	written [boardSlots]uint64
	// verify and verifyPeer: per slot, seq+1 of an eager Broadcast whose
	// next receiver's header this rank has yet to check, and that rank
	// (boardVerify); the slot's ack waits for it.
	verify     [boardSlots]uint64
	verifyPeer [boardSlots]int
	// rootPending: per slot, seq+1 of a Broadcast this rank returned from
	// as its root, until every member has acked it (rootFailed).
	rootPending [boardSlots]atomic.Uint64
}

// initBoard looks for boards shared by the communicator's ranks.
func (c *Comm) initBoard() {
	b := &c.board
	b.index = -1
	if len(c.ranks) < 2 {
		return
	}
	h := transport.BoardHostOf(c.ep, c.ranks)
	if h == nil {
		return
	}
	slot := ((h.BoardBytes() - boardCtrlBytes) / boardSlots) &^ 63
	if slot <= boardSlotHead {
		return
	}
	b.host, b.slotBytes = h, slot
}

// slotData is the data one slot holds, 0 without boards.
func (b *boardState) slotData() int {
	if b.host == nil {
		return 0
	}
	return b.slotBytes - boardSlotHead
}

// onBoard reports whether a call of op on bytes (AllToAll: per block)
// goes on the board (tune.OnBoard), forced by an algorithm set to
// AlgoBoard, else within Config.BoardBytes (Broadcast:
// BoardBroadcastBytes; AllToAll: BoardBlockBytes).
func (c *Comm) onBoard(op tune.BoardOp, bytes int, forced bool) bool {
	limit := c.cfg.BoardBytes
	switch op {
	case tune.BoardBroadcast:
		limit = c.cfg.BoardBroadcastBytes
	case tune.BoardAllToAll:
		limit = c.cfg.BoardBlockBytes
	}
	return c.board.host != nil && tune.OnBoard(op, bytes, c.Size(), limit, c.board.slotData(), forced)
}

// BoardCalls counts the calls of this communicator that ran on its
// shared-memory board on this rank (see Config.BoardBytes): a diagnostic.
func (c *Comm) BoardCalls() uint64 { return c.board.calls.Load() }

// word is the 8-byte word at off of board memory m, used atomically.
func word(m []byte, off int) *atomic.Uint64 {
	_ = m[off+7]
	return (*atomic.Uint64)(unsafe.Pointer(&m[off]))
}

// slot returns slot s of board m.
func (b *boardState) slot(m []byte, s int) []byte {
	off := boardCtrlBytes + s*b.slotBytes
	return m[off : off+b.slotBytes : off+b.slotBytes]
}

// ack is member m's ack word of slot s.
func (b *boardState) ack(m, s int) *atomic.Uint64 { return word(b.peers[m], boardOffAcks+8*s) }

// takeTicket gives a board call its place, under Comm.mu.
func (b *boardState) takeTicket() uint64 {
	b.next++
	return b.next
}

// endTicket records that the call holding ticket t ended, and moves
// serving past every ticket that has; it reports whether that ended the
// last board call issued before Close (closeAt): the caller then retires
// the board.
func (b *boardState) endTicket(t uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended[t%boardTickets] = true
	s := b.serving.Load()
	for b.ended[(s+1)%boardTickets] {
		b.ended[(s+1)%boardTickets] = false
		s++
	}
	b.serving.Store(s)
	if b.closeAt != 0 && s >= b.closeAt {
		b.closeAt = 0
		return true
	}
	return false
}

// boardSetUp claims this rank's board and tells every member its index,
// in operation o (a point-to-point AllGather, the first board call's):
// the communicator then uses the boards if every member has one, else
// never. Its outcome is per rank: a call that fails on some rank before
// its AllGather ends (a cancelled context, an abort) leaves that rank to
// set up again at its next board call, while others may have finished.
// That call's header says it sets up (header.setUp), so a member that
// took the board, or no board, for it finds a mismatch there at once
// (boardScan, the header exchange), fails the call on every rank, and
// starts over (boardReset): within a few calls every rank sets up again
// together.
func (o *operation) boardSetUp() error {
	c, b := o.c, &o.c.board
	sweepRetired()
	idx := b.host.Claim()
	if idx >= 0 {
		m := b.host.Board(c.ranks[c.rank], idx)
		if m == nil {
			b.host.Release(idx)
			idx = -1
		} else {
			clear(m[:boardCtrlBytes])
			for s := range boardSlots {
				word(b.slot(m, s), 0).Store(0)
			}
			word(m, 0).Store(c.id)
		}
	}
	n := c.Size()
	all := make([]byte, 8*n)
	binary.LittleEndian.PutUint64(all[8*c.rank:], uint64(int64(idx)))
	b.index = idx
	if err := c.allGatherRing(o, all, 8, 1); err != nil {
		b.release() // the next board call tries again, on every rank: none got all indices
		return err
	}
	b.phase = boardNone
	peers := make([][]byte, n)
	for m := range n {
		i := int(int64(binary.LittleEndian.Uint64(all[8*m:])))
		if i < 0 {
			b.release()
			return nil
		}
		peers[m] = b.host.Board(c.ranks[m], i)
		if peers[m] == nil || word(peers[m], 0).Load() != c.id {
			b.release()
			return fmt.Errorf("rank %d's board %d is not this communicator's", m, i)
		}
	}
	b.peers, b.phase = peers, boardReady
	b.up.Store(true)
	return nil
}

// boardReset returns the communicator to boardUntried, by the call
// holding the turn (boardLeave), when it met a member setting the board
// up: its board retires as at Close (its acks tell the members it reads
// theirs no more), and its next board call sets up again. b.peers stays
// until then, for calls that may still look (boardPeek reads it only
// while up).
func (c *Comm) boardReset() {
	b := &c.board
	c.retireBoard()
	b.phase = boardUntried
	b.written, b.verify = [boardSlots]uint64{}, [boardSlots]uint64{}
	for s := range boardSlots {
		b.rootPending[s].Store(0)
	}
}

// release gives this rank's board back.
func (b *boardState) release() {
	if b.index >= 0 {
		b.host.Release(b.index)
		b.index = -1
	}
	b.peers = nil
}

// retired boards: boards of closed communicators that a member had not
// yet done reading (closeBoard); each goes back to its transport once
// it has, or that member is down, at the next set-up that looks
// (sweepRetired). At most every board of every endpoint of the process.
var retired struct {
	sync.Mutex
	list []retiredBoard
}

// retiredBoard is a closed communicator's board: its host and index,
// what this rank last wrote in each slot, and the members' boards and
// endpoint ranks, whose acks must pass that.
type retiredBoard struct {
	id      uint64 // the communicator's, at [0, 8) of every member's board while it is theirs
	host    transport.BoardHost
	index   int
	written [boardSlots]uint64
	peers   [][]byte
	ranks   []int
}

// read reports whether every member still up has done reading what this
// rank wrote on the board. A member whose board another communicator
// has claimed since (its id changed) closed this one: done reading.
func (r *retiredBoard) read() bool {
	for s, w := range r.written {
		for m, p := range r.peers {
			if w > 0 && word(p, boardOffAcks+8*s).Load() < w && word(p, 0).Load() == r.id && r.host.Down(r.ranks[m]) == nil {
				return false
			}
		}
	}
	return true
}

// sweepRetired gives back every retired board its members have done
// reading.
func sweepRetired() {
	retired.Lock()
	defer retired.Unlock()
	kept := retired.list[:0]
	for _, r := range retired.list {
		if r.read() {
			r.host.Release(r.index)
		} else {
			kept = append(kept, r)
		}
	}
	clear(retired.list[len(kept):])
	retired.list = kept
}

// closeBoard gives the communicator's board back (Close), at once if
// every member has read what this rank last wrote in each slot, else
// once they have (retired): a board another communicator reused too early
// would change under a slow reader. This rank reads nothing more: its
// acks say so, for the peers' own boards. A board call still running
// (issued before Close) keeps the board until the last such call ends
// (closeAt, endTicket).
func (c *Comm) closeBoard() {
	b := &c.board
	if b.host == nil {
		return
	}
	c.mu.Lock()
	last := b.next
	c.mu.Unlock()
	b.mu.Lock()
	if b.serving.Load() < last {
		b.closeAt = last // the call that ends it retires the board (boardLeave)
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	c.retireBoard()
}

// retireBoard gives back or retires the board of a communicator that
// uses it no more (closeBoard, boardReset), when no board call runs.
func (c *Comm) retireBoard() {
	b := &c.board
	if b.phase != boardReady {
		return
	}
	for s := range boardSlots {
		b.ack(c.rank, s).Store(^uint64(0))
	}
	r := retiredBoard{id: c.id, host: b.host, index: b.index, written: b.written, peers: b.peers, ranks: c.ranks}
	b.up.Store(false)
	b.index = -1 // b.peers stays: a call issued before Close may still look (boardPeek, rootFailed)
	if r.read() {
		r.host.Release(r.index)
		return
	}
	retired.Lock()
	retired.list = append(retired.list, r)
	retired.Unlock()
}
