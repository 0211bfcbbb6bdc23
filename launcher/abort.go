package launcher

import (
	"errors"
	"strconv"
	"sync"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher/store"
)

// Abort and Shrink of a world (collective.Comm's, embedded in World).
//
// World.Abort (the communicator's Abort) ends every pending operation on
// every rank through the transports (see collective.Comm.Abort), then
// leaves the job at once: this rank notes the abort in the store (as its
// failure, and in the key ranks still forming the world watch: both
// within publishWait), stops heartbeating and watching, closes
// its transport and its store connection (the serving rank closes the
// store) without waiting for the others' goodbyes. Afterwards no
// goroutine, socket or shared-memory segment of the world is left.
//
// World.Shrink (the communicator's Shrink) agrees through the job's store
// (the keys under comm/shrink/) on the ranks to leave out: those the
// callers name and those the heartbeat watcher declared dead on any
// survivor. Under gocoll run --on-failure continue the survivors of a
// failed rank are not stopped, so they can shrink and go on. The shrunk
// communicator uses the world's transport: close it before the world.
// The store is served by rank 0 (or the launcher): a world whose store
// has gone cannot shrink.

var _ collective.Membership = (*lifecycle)(nil)

// ShrinkStore is the store the world's communicators agree through in
// Shrink: the job's, under comm/ (collective.Membership).
func (lc *lifecycle) ShrinkStore() collective.ShrinkStore { return store.Prefixed(lc.kv, "comm/") }

// DeadRanks lists the ranks the watcher has declared dead
// (collective.Membership).
func (lc *lifecycle) DeadRanks() []int {
	var dead []int
	for r := range lc.job.Size {
		if lc.guard != nil && lc.guard.isDead(r) {
			dead = append(dead, r)
		}
	}
	return dead
}

// Abort leaves the job at once (see above); the world communicator's
// Abort calls it, and Close afterwards does nothing more.
func (lc *lifecycle) Abort() error {
	lc.closeOnce.Do(func() { lc.closeErr = lc.abortNow() })
	return lc.closeErr
}

func (lc *lifecycle) abortNow() error {
	var notes sync.WaitGroup                                                                    // both notes within publishWait
	notes.Go(func() { lc.leave(errors.New("it aborted its world (Comm.Abort)"), publishWait) }) // for ranks still forming it
	lc.publish(errAbortedHere{rank: lc.job.Rank})
	notes.Wait()
	lc.closing.Store(true)
	lc.stopBeat()
	<-lc.beatDone
	lc.stopWatch()
	<-lc.watchDone
	err := lc.guard.Close()
	lc.closeStore()
	lc.log.Info("gocoll: world aborted", "rank", lc.job.Rank)
	return err
}

// errAbortedHere is the failure note of a rank that called Abort.
type errAbortedHere struct{ rank int }

func (e errAbortedHere) Error() string {
	return "rank " + strconv.Itoa(e.rank) + " aborted the world communicator (Comm.Abort)"
}
