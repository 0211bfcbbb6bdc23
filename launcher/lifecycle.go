package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher/store"
	"github.com/gocoll/gocoll/topology"
)

// byePoll is how often a closing rank looks again at which ranks are dead
// while it waits for their goodbyes.
const byePoll = 200 * time.Millisecond

// Bounds of the failure notes ranks leave in the store (see failureNotes).
const (
	maxNoteBytes = 1024
	noteTimeout  = time.Second
	// publishWait bounds how long an abort waits for its note's write.
	publishWait = 250 * time.Millisecond
)

// lifecycle is everything a world runs besides its communicator: the store
// (served or dialed), the heartbeat and the watcher. It is the closer the
// world communicator owns.
type lifecycle struct {
	job Job
	log *slog.Logger
	// transportLog is log without the rank, which the transports add.
	transportLog *slog.Logger
	srv          *store.Server // on the serving rank
	client       store.Store   // srv.Local() or a *store.Client
	kv           store.Store   // the job's prefix of client
	ln           transportListener
	topo         topology.Topology
	guard        *guardedEndpoint
	comm         atomic.Pointer[collective.Comm] // the world communicator, once made (flight.go)
	linksFrom    [3]string                       // where each level's link figures came from (probe.go)
	claimed      bool                            // this process holds its rank number in the store
	setUp        *setUpWatch                     // while Join forms the world (setupwatch.go)

	closing   atomic.Bool
	storeGone atomic.Bool
	stopBeat  context.CancelFunc
	beatDone  chan struct{}
	stopWatch context.CancelFunc
	watchDone chan struct{}

	closeOnce sync.Once
	closeErr  error
}

func byeKey(rank int) string  { return "bye/" + strconv.Itoa(rank) }
func failKey(rank int) string { return "fail/" + strconv.Itoa(rank) }

// publish records reason as this rank's latest failure in the store. It
// waits for the write at most publishWait: a store that does not answer
// that soon (behind the cut that made a peer fall silent) must not delay
// the error on its way to the program; the write goes on, up to
// noteTimeout, unless the process ends first.
func (lc *lifecycle) publish(reason error) {
	if lc.closing.Load() || lc.storeGone.Load() {
		return
	}
	text := reason.Error()
	if len(text) > maxNoteBytes {
		text = text[:maxNoteBytes] + "..."
	}
	noteWithin(publishWait, func(ctx context.Context) {
		if err := lc.kv.Set(ctx, failKey(lc.job.Rank), []byte(text)); err != nil {
			lc.log.Info("gocoll: could not record a failure in the store", "err", err)
		}
	})
}

// noteWithin runs write, a note to the store, on a goroutine of its own
// with a context of noteTimeout, and waits for it at most wait: the write
// goes on after, up to noteTimeout, unless the process ends first.
func noteWithin(wait time.Duration, write func(ctx context.Context)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), noteTimeout)
		defer cancel()
		write(ctx)
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// explain returns the failure rank recorded last, if any.
func (lc *lifecycle) explain(rank int) (string, bool) {
	if lc.storeGone.Load() {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), noteTimeout)
	defer cancel()
	v, ok, err := lc.kv.TryGet(ctx, failKey(rank))
	if err != nil || !ok {
		return "", false
	}
	return string(v), true
}

// heartbeatEvery is the interval of heartbeats and of the watcher's polls.
func (lc *lifecycle) heartbeatEvery() time.Duration {
	return max(lc.job.HeartbeatTimeout/10, 10*time.Millisecond)
}

func (lc *lifecycle) startHeartbeat() {
	ctx, cancel := context.WithCancel(context.Background())
	lc.stopBeat, lc.beatDone = cancel, make(chan struct{})
	go func() {
		defer close(lc.beatDone)
		err := store.Heartbeat(ctx, lc.kv, lc.job.Rank, lc.heartbeatEvery())
		if err != nil && !lc.closing.Load() {
			lc.log.Warn("gocoll: heartbeat stopped", "err", err)
		}
	}()
}

func (lc *lifecycle) startWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	lc.stopWatch, lc.watchDone = cancel, make(chan struct{})
	go func() {
		defer close(lc.watchDone)
		every := lc.heartbeatEvery()
		err := store.Watch(ctx, lc.kv, lc.job.Size, lc.job.HeartbeatTimeout, every, func(stale []int) {
			lc.onStale(ctx, stale)
		})
		if err != nil && ctx.Err() == nil && !lc.closing.Load() {
			lc.storeLost(err)
		}
	}()
}

// onStale declares dead the stale ranks that did not say goodbye.
func (lc *lifecycle) onStale(ctx context.Context, stale []int) {
	for _, r := range stale {
		if r == lc.job.Rank {
			continue
		}
		if _, said, err := lc.kv.TryGet(ctx, byeKey(r)); err != nil || said {
			continue
		}
		ri, _ := lc.topo.Rank(r)
		cause := fmt.Errorf("%w for %v (host %s)", ErrNoHeartbeat, lc.job.HeartbeatTimeout, ri.Host)
		if lc.guard.declareDead(r, cause) {
			lc.log.Warn("gocoll: rank declared dead", "dead", r, "host", ri.Host, "timeout", lc.job.HeartbeatTimeout)
		}
	}
}

// storeLost handles the loss of the store while the world is up: if rank 0
// served it, rank 0 is gone; otherwise nobody can be vouched for.
func (lc *lifecycle) storeLost(err error) {
	lc.storeGone.Store(true)
	lc.log.Warn("gocoll: lost the store", "store", lc.job.Store, "err", err)
	if lc.job.StoreAtRank0 {
		lc.guard.declareDead(0, fmt.Errorf("the store it serves at %s is unreachable: %v", lc.job.Store, err))
		return
	}
	lc.guard.declareLost(fmt.Errorf("gocoll: lost the store at %s: %v", lc.job.Store, err))
}

// Close leaves the job (see Join); the world communicator calls it.
func (lc *lifecycle) Close() error {
	lc.closeOnce.Do(func() { lc.closeErr = lc.shutdown() })
	return lc.closeErr
}

func (lc *lifecycle) shutdown() error {
	lc.closing.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), lc.job.HeartbeatTimeout+time.Second)
	defer cancel()
	setCtx, setCancel := context.WithTimeout(ctx, 5*time.Second)
	byeErr := lc.kv.Set(setCtx, byeKey(lc.job.Rank), nil)
	setCancel()
	lc.stopBeat()
	<-lc.beatDone
	if !lc.awaitGoodbyes(ctx) {
		// Some rank may still be forming its world: tell it (setupwatch.go).
		lc.leave(errors.New("it closed its world without every other rank's goodbye"), noteTimeout)
	}
	lc.stopWatch()
	<-lc.watchDone
	logStats(lc.transportLog.With("rank", lc.job.Rank), lc.guard.TransportStats())
	logBoardUse(lc.transportLog.With("rank", lc.job.Rank), lc.comm.Load())
	err := lc.guard.Close()
	lc.closeStore()
	if byeErr != nil && !errors.Is(byeErr, store.ErrClosed) {
		lc.log.Info("gocoll: could not say goodbye", "err", byeErr)
	}
	return err
}

// awaitGoodbyes waits until every other rank said goodbye or was declared
// dead, or ctx ends, or the store goes away (the serving rank closes it
// only once every goodbye is in). It reports whether the wait ended
// before ctx did.
func (lc *lifecycle) awaitGoodbyes(ctx context.Context) bool {
	for {
		var keys []string
		for r := range lc.job.Size {
			if r != lc.job.Rank && !lc.guard.isDead(r) {
				keys = append(keys, byeKey(r))
			}
		}
		if len(keys) == 0 {
			return true
		}
		// Wait in short rounds, to notice ranks declared dead meanwhile.
		round, cancel := context.WithTimeout(ctx, byePoll)
		err := lc.kv.Wait(round, keys...)
		cancel()
		var missing *store.MissingKeysError
		switch {
		case err == nil:
			return true
		case ctx.Err() != nil:
			lc.log.Info("gocoll: closing without every rank's goodbye", "missing", len(keys))
			return false
		case !errors.As(err, &missing):
			return true // the store is gone
		}
	}
}

func (lc *lifecycle) closeStore() {
	if lc.client != nil {
		_ = lc.client.Close()
	}
	if lc.srv != nil {
		_ = lc.srv.Close()
		storeNotice(lc.job.noticesTo(), lc.job.Rank, lc.srv.Stats())
	}
}

// storeNotice says, in one line, what the store this rank served refused:
// connections without the job's key, and frames with a wrong tag. It says
// nothing when there were none.
func storeNotice(w io.Writer, rank int, st store.ServerStats) {
	if st.RefusedKey == 0 && st.BadTags == 0 {
		return
	}
	fmt.Fprintf(w, "gocoll: rank %d: the store refused %d connections without this job's key and %d frames with a wrong tag (%d connections accepted, %d authenticated)\n",
		rank, st.RefusedKey, st.BadTags, st.Accepted, st.Authenticated)
}

// abandon releases what a failed Join had started, and tells the ranks
// still forming the world that this one left for reason, if not nil
// (setupwatch.go).
func (lc *lifecycle) abandon(reason error) {
	if reason != nil && lc.leave(reason, noteTimeout) && lc.job.ServeStore {
		lc.awaitLeftSeen()
	}
	lc.closing.Store(true)
	if lc.stopBeat != nil {
		lc.stopBeat()
		<-lc.beatDone
	}
	if lc.ln != nil {
		_ = lc.ln.Close()
	}
	if lc.guard != nil {
		_ = lc.guard.Close()
	}
	lc.closeStore()
}
