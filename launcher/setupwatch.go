package launcher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// A rank that leaves while the others still form the world (Join) tells
// them so, and they stop at once instead of waiting for
// GOCOLL_CONNECT_TIMEOUT:
//
//   - a rank whose Join fails (its context cancelled, as on Ctrl-C in a
//     program that uses signal.NotifyContext, or any error of its own),
//     which Aborts, or which Closes its world without every other rank's
//     goodbye, writes the job's "left" key in the store (the first such
//     rank's note stays), with its reason. A Join that ran out of time
//     (GOCOLL_CONNECT_TIMEOUT or its context's deadline) writes none: it
//     gave up on what it waited for (ranks missing, a peer that does not
//     answer), which is no fault of its own, and the others, timing out
//     in turn, name what they miss themselves. Except rank 0 serving the
//     store (StoreAtRank0): its store goes with it, so the others would
//     not time out but see the store go; it writes the note, its reason
//     what it missed (the ranks that never came), and keeps the store up
//     until every rank that claimed its number has read it, at most
//     noteTimeout (awaitLeftSeen);
//   - a rank forming its world waits for that key, and fails with a
//     *transport.PeerError naming the rank that left and wrapping
//     [ErrRankLeft] and its reason.
//
// A rank killed during the set-up leaves no note: its launcher (gocoll run,
// mpirun, srun) stops the job, or the others wait until
// GOCOLL_CONNECT_TIMEOUT. Watching heartbeats during the set-up was tried
// and dropped: on a loaded machine a live rank's heartbeat stood still for
// a 1 s timeout while the world formed, failing a Join that would have
// succeeded.

// ErrRankLeft is wrapped by the error of a Join that ended because another
// rank left the job before the world formed.
var ErrRankLeft = errors.New("left the job before the world formed")

// leftKey is the job's key in which the first rank that left says so:
// "<rank>\n<reason>".
const leftKey = "left"

// setUpWatch is what a rank forming its world runs to learn of ranks that
// left; stop ends it.
type setUpWatch struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// watchSetUp watches for ranks that leave while this one forms its world,
// and ends the set-up through leave with the reason.
func (lc *lifecycle) watchSetUp(leave context.CancelCauseFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &setUpWatch{cancel: cancel}
	lc.setUp = w
	w.wg.Go(func() {
		v, err := lc.kv.Get(ctx, leftKey)
		if err != nil {
			return // ended, or the store went (the set-up's own calls see it)
		}
		rank, reason := parseLeft(v)
		if rank == lc.job.Rank {
			return
		}
		if rank == 0 && lc.job.StoreAtRank0 {
			// Rank 0 keeps its store up until this is in (awaitLeftSeen).
			_ = lc.kv.Set(ctx, seenKey(lc.job.Rank), nil)
		}
		leave(&transport.PeerError{Rank: rank, Err: fmt.Errorf("%w: %s", ErrRankLeft, reason)})
	})
}

// stopSetUpWatch ends watchSetUp's goroutines, if they run.
func (lc *lifecycle) stopSetUpWatch() {
	if w := lc.setUp; w != nil {
		w.cancel()
		w.wg.Wait()
		lc.setUp = nil
	}
}

// setUpLeft returns the reason a set-up ended under ctx for another
// rank's leaving, or nil.
func setUpLeft(ctx context.Context) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrRankLeft) {
		return cause
	}
	return nil
}

// leave notes in the job's store that this rank left for reason, unless
// another rank's note is there already. It waits for the store at most
// wait (the write goes on up to noteTimeout: noteWithin), and reports
// whether the note is known to be written by then. A rank that has not
// claimed its number leaves no note.
func (lc *lifecycle) leave(reason error, wait time.Duration) bool {
	if !lc.claimed || lc.kv == nil || lc.storeGone.Load() {
		return false
	}
	text := reason.Error()
	if len(text) > maxNoteBytes {
		text = text[:maxNoteBytes] + "..."
	}
	v := strconv.AppendInt(nil, int64(lc.job.Rank), 10)
	v = append(append(v, '\n'), text...)
	var noted atomic.Bool
	noteWithin(wait, func(ctx context.Context) {
		_, set, err := lc.kv.CompareAndSet(ctx, leftKey, nil, v)
		if err != nil {
			lc.log.Info("gocoll: could not note in the store that this rank left", "err", err)
		}
		noted.Store(set)
	})
	return noted.Load()
}

// seenKey is where a rank says it has read the "left" note of rank 0,
// which serves the store.
func seenKey(rank int) string { return "left-seen/" + strconv.Itoa(rank) }

// awaitLeftSeen keeps the store this rank serves up, after its "left"
// note, until every other rank that claimed its number has read the note,
// or noteTimeout passes: the store goes with this rank, and the note's
// answer to a rank's watch would otherwise be cut off with it, leaving the
// rank to say only that the store went away.
func (lc *lifecycle) awaitLeftSeen() {
	ctx, cancel := context.WithTimeout(context.Background(), noteTimeout)
	defer cancel()
	var keys []string
	for r := range lc.job.Size {
		if r == lc.job.Rank {
			continue
		}
		_, claimed, err := lc.kv.TryGet(ctx, claimKey(r))
		if err != nil {
			return
		}
		if claimed {
			keys = append(keys, seenKey(r))
		}
	}
	if len(keys) > 0 {
		_ = lc.kv.Wait(ctx, keys...)
	}
}

// parseLeft reads leftKey's value; a malformed one names rank -1.
func parseLeft(v []byte) (rank int, reason string) {
	head, tail, _ := bytes.Cut(v, []byte{'\n'})
	r, err := strconv.Atoi(string(head))
	if err != nil {
		return -1, fmt.Sprintf("malformed note %q in the store", v)
	}
	return r, string(tail)
}
