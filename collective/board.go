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
// (boardallreduce.go). A rank's board, with D = Config.BoardRing:
//
//	[0, 8)      the communicator's id, written when it claimed the board
//	[8, 16)     fail: seq+1 of the last call this rank failed (0: none)
//	[16, 20)    the length of that failure's text, at [128, 512)
//	[24, 32)    closed: x means this rank closed the communicator after
//	            issuing its calls below x (0: not closed; retireBoard, at
//	            Close): it runs no call numbered x or above, so a peer's
//	            wait for it on such a call fails at once (closedErr)
//	[32, 40)    bell: a futex word (its low 32 bits) that peers waiting
//	            on this board sleep on (boardNap); this rank adds one to
//	            it and wakes them when want says one sleeps (ringBell)
//	[40, 48)    want: 1 while a peer would sleep on the bell
//	[48, 56)    fail before: what fail held before its last store, the
//	            failure before the last (stored before fail: failedAt)
//	[64, 96)    ack: per slot s, x means this rank has done reading slot s
//	            of every call numbered below x (its own and its peers')
//	[96, 104)   ended: x means this rank reads no slot of any call
//	            numbered below x any more, on any member's board: its
//	            board calls below x have ended and left no check pending
//	            (boardVerify); an ack of every slot (storeEnded). Stored
//	            at most twice a call, once where the calls follow each
//	            other (a slot's own ack is then not stored: acked): in
//	            the big slots' acks' cache line, not in the fail word's,
//	            which waiting peers poll
//	[512, ...)  the ring: D small slots (boardRingSlot bytes each), then
//	            their D ack words, as above
//	then        boardSlots slots, call seq in slot seq mod boardSlots,
//	            but a Broadcast of at most boardRingData bytes, which
//	            takes ring slot seq mod D (D > 0): a slot is [0, 8) seq+1,
//	            stored last; [8, 40) the call's operation header
//	            (header.marshal); [48, 56) done, of an AllReduce in
//	            shards (boardreducescatter.go); from 64 the call's data.
//
// The ring lets an eager root Broadcast of a few bytes run up to D calls
// ahead of its slowest receiver (boardbroadcast.go), where a larger one
// runs at most boardSlots ahead. Every rank writes exactly one slot per
// board call; its peers look at the other one the call could have taken
// too (boardWait.alt), so a member whose arguments put the call in the
// other slot is a mismatch, never a wait to the deadline.
const (
	boardSlots     = 4
	boardRingSlot  = 128 // a ring slot: head and boardRingData bytes
	boardRingData  = boardRingSlot - boardSlotHead
	boardAllSlots  = boardSlots + BoardRingMax // slot indices: big, then ring
	boardCtrlBytes = 512
	boardOffFail   = 8
	boardOffTextN  = 16
	boardOffClosed = 24
	boardOffBell   = 32
	boardOffWant   = 40
	boardOffFailB4 = 48
	boardOffEnded  = 96
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
	host transport.BoardHost // nil: this communicator has no boards
	boardLayout
	aborted atomic.Bool   // the communicator was aborted (abortWith)
	up      atomic.Bool   // set up and ready (phase boardReady)
	calls   atomic.Uint64 // calls run on the board (BoardCalls)
	leanN   uint64        // lean Broadcasts (BoardLeanCalls), under Comm.mu: not in calls

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
	phase int
	index int      // this rank's board, -1 if none
	peers [][]byte // the members' boards, by communicator rank
	// seenEnded: by member, the highest ended word below ^0 a lean call
	// saw it store (leanAcked), 0 before: set up with peers.
	seenEnded []uint64
	// By slot index (slotOf: boardSlots big ones, then the ring's).
	written [boardAllSlots]uint64
	// stream: how this rank writes big AllToAll blocks (boardstream.go).
	stream streamPick
	// verify and verifyPeer: per slot, seq+1 of an eager Broadcast whose
	// next receiver's header this rank has yet to check, and that rank
	// (boardVerify); the slot's ack waits for it. verifyN counts them;
	// verifyLow is at most the lowest of them (^0: none), exact after
	// boardVerify (storeEnded).
	verify     [boardAllSlots]uint64
	verifyPeer [boardAllSlots]int
	verifyN    int
	verifyLow  uint64
	// verifyOld is the slot of the check verifyLow names, when
	// verify[verifyOld] == verifyLow; verifyFail, the peer's fail word as
	// the last whole pass of boardVerify found it (its quick look: due).
	verifyOld  int
	verifyFail uint64
	// endedWord is what this rank last stored in its ended word (storeEnded).
	endedWord uint64
	// rootPending: per slot, seq+1 of a Broadcast this rank returned from
	// as its root, until the call that reuses the slot settles it
	// (rootSettle) or a receiver's failure of it is found (rootFailed).
	rootPending [boardAllSlots]atomic.Uint64
	rootN       atomic.Int64 // how many rootPending hold a call
	// closedAt is the communicator's count of issued calls when Close came
	// (closeBoard), 0 before: retireBoard writes it in the closed word.
	closedAt atomic.Uint64
}

// boardLayout is where the slots lie on every member's board (the same on
// all: set up from Config.BoardRing, which every rank must share, and the
// transport's board size).
type boardLayout struct {
	slotBytes  int // one big slot, header included
	ring       int // ring slots (D), 0: none
	ringAckOff int // the ring's ack words
	bigOff     int // the first big slot
}

// layoutFor places ring slots and the big slots on a board of size
// bytes; the ring is left out (ring 0) where the big slots would not
// hold a header and a cache line of data.
func layoutFor(bytes, ring int) (boardLayout, bool) {
	for ; ; ring = 0 {
		l := boardLayout{ring: ring, ringAckOff: boardCtrlBytes + ring*boardRingSlot}
		l.bigOff = (l.ringAckOff + 8*ring + 63) &^ 63
		l.slotBytes = ((bytes - l.bigOff) / boardSlots) &^ 63
		if l.slotBytes > boardSlotHead {
			return l, true
		}
		if ring == 0 {
			return boardLayout{}, false
		}
	}
}

// slotOf is the slot index of call seq: a ring slot for a Broadcast that
// fits one (ring), else a big slot.
func (l *boardLayout) slotOf(seq uint64, ring bool) int {
	if ring && l.ring > 0 {
		return boardSlots + int(seq&uint64(l.ring-1)) // a power of two (Config.BoardRing)
	}
	return int(seq % boardSlots)
}

// otherSlot is the slot call seq would have taken had it been (ring) or
// not been a ring call, or -1 if there is no other.
func (l *boardLayout) otherSlot(seq uint64, g int) int {
	if l.ring == 0 {
		return -1
	}
	return l.slotOf(seq, g < boardSlots)
}

// nslots is the number of slot indices in use.
func (l *boardLayout) nslots() int { return boardSlots + l.ring }

// ackOff is the offset of the ack word of slot g.
func (l *boardLayout) ackOff(g int) int {
	if g < boardSlots {
		return boardOffAcks + 8*g
	}
	return l.ringAckOff + 8*(g-boardSlots)
}

// initBoard looks for boards shared by the communicator's ranks.
func (c *Comm) initBoard() {
	b := &c.board
	b.index, b.verifyLow = -1, ^uint64(0)
	if len(c.ranks) < 2 {
		return
	}
	h := transport.BoardHostOf(c.ep, c.ranks)
	if h == nil {
		return
	}
	l, ok := layoutFor(h.BoardBytes(), max(c.cfg.BoardRing, 0))
	if !ok {
		return
	}
	b.host, b.boardLayout = h, l
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

// BoardSlotBytes is the most data one call of this communicator can put
// on its shared-memory board (a big slot's, after its head), 0 where it
// has no board: Config.BoardBytes, BoardBroadcastBytes and
// BoardBlockBytes (times the size) take effect up to it. Config.BoardRing
// lowers it: the ring's slots come out of the same board (board.go).
func (c *Comm) BoardSlotBytes() int { return c.board.slotData() }

// BoardCalls counts the calls of this communicator that ran on its
// shared-memory board on this rank (see Config.BoardBytes): a diagnostic.
func (c *Comm) BoardCalls() uint64 { return c.board.calls.Load() + c.BoardLeanCalls() }

// BoardLeanCalls counts the calls of BoardCalls that ran the lean way
// (a steady small Broadcast with nothing to wait for: boardlean.go), on
// this rank: a diagnostic.
func (c *Comm) BoardLeanCalls() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.board.leanN
}

// word is the 8-byte word at off of board memory m, used atomically.
func word(m []byte, off int) *atomic.Uint64 {
	_ = m[off+7]
	return (*atomic.Uint64)(unsafe.Pointer(&m[off]))
}

// slot returns slot g of board m (slotOf).
func (l *boardLayout) slot(m []byte, g int) []byte {
	if g >= boardSlots {
		off := boardCtrlBytes + (g-boardSlots)*boardRingSlot
		return m[off : off+boardRingSlot : off+boardRingSlot]
	}
	off := l.bigOff + g*l.slotBytes
	return m[off : off+l.slotBytes : off+l.slotBytes]
}

// ack is member m's ack word of slot g.
func (b *boardState) ack(m, g int) *atomic.Uint64 { return word(b.peers[m], b.ackOff(g)) }

// acked reports whether member m, whose board is mem, has done reading
// slot g (ack offset off) of every call below x: its ack of the slot, or
// its ended word, which acks every slot. The slot a member's call takes
// depends on its arguments (slotOf), so a call that took the other slot,
// or failed before it took one, acks the slot through ended only.
func acked(mem []byte, off int, x uint64) bool { return ackedBy(mem, off, x) != 0 }

// ackedBy is acked, returning the word that acks (0: none): ^0 is a
// retired board's (retireBoard), whose member may have closed the
// communicator (closedErr).
func ackedBy(mem []byte, off int, x uint64) uint64 {
	if a := word(mem, off).Load(); a >= x {
		return a
	}
	if e := word(mem, boardOffEnded).Load(); e >= x {
		return e
	}
	return 0
}

// closedErr is the error of call seq waiting on member m, whose board is
// mem, if m will never run it: it closed the communicator before issuing
// it (its closed word), or its board is another communicator's now (a
// closed member's board, given back and claimed again). Else nil.
func (b *boardState) closedErr(c *Comm, m int, mem []byte, seq uint64) error {
	if x := word(mem, boardOffClosed).Load(); x != 0 && seq >= x {
		return fmt.Errorf("rank %d closed this communicator after operation #%d", m, x-1)
	}
	if id := word(mem, 0).Load(); id != c.id {
		return fmt.Errorf("rank %d's board is no longer this communicator's (it holds communicator %#x's): rank %d closed this communicator", m, id, m)
	}
	return nil
}

// storeEnded sets this rank's ended word to x, held back to the oldest
// call whose check is still pending (endedAt), by the call holding the
// turn: every earlier board call has ended. It never lowers the word: a
// check is left only by the call that holds the turn, for itself. A word
// that would not change is not stored again (a board call's start stores
// what the last one's end did).
func (b *boardState) storeEnded(rank int, x uint64) {
	if x = b.endedAt(x); x != b.endedWord {
		word(b.peers[rank], boardOffEnded).Store(x)
		b.endedWord = x
	}
}

// endedAt is what storeEnded(x) stores: x held back to the oldest call
// whose check is still pending (verifyLow: its slot's ack waits for it).
// A slot's ack below it says nothing acked doesn't know.
func (b *boardState) endedAt(x uint64) uint64 {
	if b.verifyN > 0 {
		x = min(x, b.verifyLow-1)
	}
	return x
}

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
			clear(m[b.ringAckOff : b.ringAckOff+8*b.ring])
			for g := range b.nslots() {
				word(b.slot(m, g), 0).Store(0)
			}
			word(m, 0).Store(c.id)
		}
	}
	b.endedWord = 0 // cleared
	n := c.Size()
	all := make([]byte, 24*n) // per rank: its board's index, its ring's depth, its split size
	binary.LittleEndian.PutUint64(all[24*c.rank:], uint64(int64(idx)))
	binary.LittleEndian.PutUint64(all[24*c.rank+8:], uint64(b.ring))
	binary.LittleEndian.PutUint64(all[24*c.rank+16:], uint64(int64(max(c.cfg.BoardSplitBytes, -1))))
	b.index = idx
	if err := c.allGatherRing(o, all, 24, 1); err != nil {
		b.release() // the next board call tries again, on every rank: none got all indices
		return err
	}
	b.phase = boardNone
	peers := make([][]byte, n)
	for m := range n {
		if string(all[24*m+8:24*m+24]) != string(all[24*c.rank+8:24*c.rank+24]) {
			// Their slots lie elsewhere (Config.BoardRing differs), or they
			// fold other AllReduces in shards (BoardSplitBytes). Every
			// rank sees the same and does without the board, the call
			// going on point to point: an error here would end the call
			// on ranks still in their AllGather, which would set up again.
			b.release()
			return nil
		}
	}
	for m := range n {
		i := int(int64(binary.LittleEndian.Uint64(all[24*m:])))
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
	b.peers, b.phase, b.seenEnded = peers, boardReady, make([]uint64, n)
	b.up.Store(true)
	return nil
}
