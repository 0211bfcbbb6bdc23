//go:build linux

package shm

import (
	"context"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// boardHost is an endpoint's transport.BoardHost: Config.Boards boards of
// Config.BoardBytes at the end of every rank's segment. A rank claims its
// own; it reads its peers' through its mappings of their segments. Once
// boards were handed out, Close leaves zeroed private memory where every
// segment was mapped (segment.unmap), since a communicator may still hold
// a board's slice.
type boardHost struct{ e *Endpoint }

var _ transport.BoardHost = boardHost{}

// BoardHost implements transport.Boards: the endpoint's boards, if it has
// any and reaches every rank of ranks itself.
func (e *Endpoint) BoardHost(ranks []int) transport.BoardHost {
	if e.cfg.Boards <= 0 {
		return nil
	}
	for _, r := range ranks {
		if r < 0 || r >= e.size || e.peers[r] == nil {
			return nil
		}
	}
	e.mapMu.Lock()
	defer e.mapMu.Unlock()
	if e.unmapped {
		return nil
	}
	for _, p := range e.peers {
		if p != nil {
			p.seg.retire = true
		}
	}
	e.seg.retire = true
	return e.boardHost
}

// BoardBytes implements transport.BoardHost.
func (h boardHost) BoardBytes() int { return h.e.cfg.BoardBytes }

// Claim implements transport.BoardHost.
func (h boardHost) Claim() int {
	e := h.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return -1
	}
	for i, used := range e.boardsUsed {
		if !used {
			e.boardsUsed[i] = true
			e.stats.boardsClaimed.Add(1)
			return i
		}
	}
	return -1
}

// Release implements transport.BoardHost.
func (h boardHost) Release(index int) {
	e := h.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if index >= 0 && index < len(e.boardsUsed) {
		e.boardsUsed[index] = false
	}
}

// Board implements transport.BoardHost.
func (h boardHost) Board(rank, index int) []byte {
	e := h.e
	if rank < 0 || rank >= e.size || e.peers[rank] == nil {
		return nil
	}
	e.mapMu.RLock()
	defer e.mapMu.RUnlock()
	if e.unmapped {
		return nil
	}
	return e.peers[rank].seg.board(index)
}

// Down implements transport.BoardHost.
func (h boardHost) Down(rank int) error {
	e := h.e
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return transport.ErrClosed
	case rank < 0 || rank >= e.size || e.peers[rank] == nil:
		return transport.ErrBadRank
	}
	return e.down[rank]
}

// Ended implements transport.BoardHost.
func (h boardHost) Ended(op transport.OpKey) error {
	e := h.e
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.aborted[op]
}

// Spin implements transport.BoardHost: it polls done as a request's Spin
// does, draining the rings meanwhile, for up to Config.BoardSpinWait.
func (h boardHost) Spin(ctx context.Context, done func() bool) bool {
	return h.spinFor(ctx, done, h.e.cfg.BoardSpinWait)
}

// SpinLong implements transport.BoardHost: Spin for up to
// longBoardSpin.
func (h boardHost) SpinLong(ctx context.Context, done func() bool) bool {
	return h.spinFor(ctx, done, longBoardSpin(h.e.cfg.BoardSpinWait, h.e.boardSpinShort))
}

func (h boardHost) spinFor(ctx context.Context, done func() bool, d time.Duration) bool {
	if done() {
		return true
	}
	if d > 0 {
		h.e.spin(ctx, done, d)
	}
	return done()
}

// longBoardSpin is SpinLong's budget: DefaultBoardSpinWait where Connect
// shortened the board spin to OversubscribedBoardSpinWait (short), else
// the board spin itself. A 64 KiB Broadcast (big slots) with 4 ranks on 2
// cores under load 34: the first 200 calls of a job took 12-66 us a call
// (median 29) at 20 us, 10-23 (median 15) at 1 ms, and 8-44 against 8-15
// in the calls after them (bench/results/shm_large.md, session 18).
func longBoardSpin(board time.Duration, short bool) time.Duration {
	if short {
		return max(board, DefaultBoardSpinWait)
	}
	return board
}
