package collective

import (
	"sync"

	"github.com/gocoll/gocoll/transport"
)

// The board's end: a reset, release, Close and the retired boards a
// closed communicator leaves for its peers (split from board.go).

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
	b.written, b.verify, b.verifyN, b.verifyLow = [boardAllSlots]uint64{}, [boardAllSlots]uint64{}, 0, ^uint64(0)
	for g := range b.rootPending {
		b.rootPending[g].Store(0)
	}
	b.rootN.Store(0)
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
	lay     boardLayout
	written [boardAllSlots]uint64
	peers   [][]byte
	ranks   []int
}

// read reports whether every member still up has done reading what this
// rank wrote on the board. A member whose board another communicator
// has claimed since (its id changed) closed this one: done reading.
func (r *retiredBoard) read() bool {
	for s, w := range r.written {
		for m, p := range r.peers {
			if w > 0 && !acked(p, r.lay.ackOff(s), w) && word(p, 0).Load() == r.id && r.host.Down(r.ranks[m]) == nil {
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
	b.closedAt.Store(c.nextOp) // final: c.closed is set (Close), no call is issued any more
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
// uses it no more (closeBoard, boardReset), when no board call runs. At
// Close it first writes the closed word, then the acks: a peer that finds
// the acks retired looks at it (boardPublish).
func (c *Comm) retireBoard() {
	b := &c.board
	if b.phase != boardReady {
		return
	}
	if x := b.closedAt.Load(); x != 0 {
		word(b.peers[c.rank], boardOffClosed).Store(x)
	}
	for g := range b.nslots() {
		b.ack(c.rank, g).Store(^uint64(0))
	}
	word(b.peers[c.rank], boardOffEnded).Store(^uint64(0))
	b.endedWord = ^uint64(0)
	b.ringBell(c.rank, ^uint64(0))
	r := retiredBoard{id: c.id, host: b.host, index: b.index, lay: b.boardLayout, written: b.written, peers: b.peers, ranks: c.ranks}
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
