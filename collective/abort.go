package collective

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// ErrAborted is wrapped by the error of every operation that Abort ended,
// on the rank that called it and on every other, and of every operation
// issued on the communicator afterwards. Test with errors.Is.
var ErrAborted = errors.New("collective: communicator aborted")

// Bounds of what Abort tells the peers.
const (
	// AbortAhead is how many operation numbers past its own next one a
	// rank aborts on every peer, for collectives and for each direction
	// of point-to-point traffic: a peer that runs ahead (its part of an
	// operation needed nothing more from this rank) finds its next
	// operations already ended. A peer further ahead learns from the
	// first failure it meets, which carries the abort on (see Abort).
	AbortAhead = 64
	// abortKeysMax bounds the operations one Abort (or its relay on a
	// peer) ends ahead, besides those running here (at most
	// MaxRunningOps), so that it does not flood the transports' abort
	// tables (inproc, shm, MetaRoCE remember 4096 each).
	abortKeysMax = 1024
	// abortDrain bounds how long Abort waits for the operations it ended
	// to return before it releases the transport anyway.
	abortDrain = 10 * time.Second
)

// abortState is the part of a Comm that Abort works on, under Comm.mu.
type abortState struct {
	err error // set once: the abort, wrapping ErrAborted
	by  int   // the communicator rank that aborted
	// released: Abort released what the communicator owns (Close must not)
	released bool
	live     []*operation  // operations between track and untrack, o at o.liveAt-1
	drained  chan struct{} // closed when live empties after an abort
}

// Abort ends the communicator at once, on this rank and on every other: every
// pending operation fails with an error wrapping ErrAborted (naming the rank
// that aborted), here at once and on the peers as soon as the transport
// brings them the abort, and so does every later operation, on every rank.
// A peer that learns of the abort carries it on to every rank, so that ranks
// that do not talk to this one directly end too. Then, once the operations
// running here have returned (bounded by 10 s), it releases what the
// communicator owns (NewOwning's closer: its Abort method if it has one,
// else Close), so that no goroutine, socket or shared-memory segment is
// left; a world communicator from gocoll.Init leaves the job without waiting
// for the others' goodbyes. Communicators made by Split or Shrink are
// separate and not aborted.
//
// Abort is idempotent and may be called from any goroutine, including
// while operations block (but not from inside an operation, such as
// Config.OnStall: it would wait for it the whole 10 s). It returns the
// error of releasing the owned resources, if any. Like ncclCommAbort, it is
// the way out of a communicator whose peer failed; Shrink may still be
// called afterwards, before the world is closed.
func (c *Comm) Abort() error {
	wait := c.abortWith(c.rank, false)
	// A call that returned early (eager.go) is still running here but
	// nobody waits on it: end it now (its requests were just aborted).
	_ = c.settleDeferred(context.Background(), nil)
	if wait != nil {
		t := time.NewTimer(abortDrain)
		select {
		case <-wait:
		case <-t.C:
		}
		t.Stop()
	}
	c.mu.Lock()
	done := c.closed || c.abort.released
	c.abort.released = true
	c.mu.Unlock()
	if done || c.owned == nil {
		return nil
	}
	if a, ok := c.owned.(interface{ Abort() error }); ok {
		return a.Abort()
	}
	return c.owned.Close()
}

// Aborted returns the error wrapping ErrAborted that ended the
// communicator (by Abort here or on a peer), or nil.
func (c *Comm) Aborted() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.abort.err
}

// abortWith marks the communicator aborted by communicator rank by (the
// first abort wins) and ends its operations on this rank and every other:
// each one running here, and the next AbortAhead numbers of collectives
// and of point-to-point traffic. The reason travels as text (abortReason),
// so that a peer recognises it. A relay (a peer's abort heard here) does
// nothing if the communicator is aborted already. It returns a channel
// closed once no operation runs here, or nil if none does.
func (c *Comm) abortWith(by int, relay bool) <-chan struct{} {
	c.mu.Lock()
	if c.abort.err != nil && relay {
		c.mu.Unlock()
		return nil // another failure relayed it already
	}
	if c.abort.err == nil {
		c.abort.err = &abortedError{id: c.id, by: by}
		c.abort.by = by
		c.board.aborted.Store(true) // ends its board waits (boardwait.go)
	}
	keys := c.abortKeys()
	var wait chan struct{}
	if len(c.abort.live) > 0 {
		if c.abort.drained == nil {
			c.abort.drained = make(chan struct{})
		}
		wait = c.abort.drained
	}
	reason := errors.New(abortReason(c.id, c.abort.by))
	c.mu.Unlock()
	for _, k := range keys {
		c.ep.Abort(k, c.ranks, reason)
	}
	if wait == nil {
		return nil
	}
	return wait
}

// abortKeys lists the operations an abort ends, under c.mu: every one
// running here and the next AbortAhead of each kind, at most abortKeysMax
// of those.
func (c *Comm) abortKeys() []transport.OpKey {
	seen := make(map[transport.OpKey]struct{})
	var keys []transport.OpKey
	for _, o := range c.abort.live { // at most MaxRunningOps: all of them
		if _, ok := seen[o.key]; !ok {
			seen[o.key] = struct{}{}
			keys = append(keys, o.key)
		}
	}
	ahead := 0
	add := func(k transport.OpKey) {
		if _, ok := seen[k]; ok || ahead >= abortKeysMax {
			return
		}
		seen[k] = struct{}{}
		keys = append(keys, k)
		ahead++
	}
	for i := range uint64(AbortAhead) {
		add(transport.OpKey{Comm: c.id, Op: c.nextOp + i})
	}
	// Point-to-point keys: one per direction of each pair, numbered per
	// pair (p2p.go).
	for peer := range c.ranks {
		if peer == c.rank {
			continue
		}
		out, in := p2pKeyComm(c.id, c.rank, peer), p2pKeyComm(c.id, peer, c.rank)
		for i := range uint64(AbortAhead) {
			add(transport.OpKey{Comm: out, Op: c.p2pSent[peer] + i})
			add(transport.OpKey{Comm: in, Op: c.p2pRecvd[peer] + i})
		}
	}
	return keys
}

// p2pKeyComm is the OpKey.Comm of point-to-point messages from rank from to
// rank to (p2p.go).
func p2pKeyComm(id uint64, from, to int) uint64 {
	k := id ^ p2pSalt
	if from < to {
		k ^= 1
	}
	return k
}

// abortedError is the abort of communicator id by its rank by; it wraps
// ErrAborted, and its text is abortReason's.
type abortedError struct {
	id uint64
	by int
}

func (e *abortedError) Error() string { return "collective: " + abortReason(e.id, e.by) }
func (e *abortedError) Unwrap() error { return ErrAborted }

// abortReason is the text an abort carries to the peers: they recognise a
// communicator abort by it (parseAbortRank).
func abortReason(id uint64, rank int) string {
	return fmt.Sprintf("communicator %#x aborted by rank %d", id, rank)
}

// parseAbortRank finds, in an error's text, the abort of the communicator
// whose abortReason prefix is "communicator <id> " (any communicator if id
// is ""), and returns the rank that aborted it.
func parseAbortRank(text, id string) (int, bool) {
	const mark = " aborted by rank "
	for {
		i := strings.Index(text, mark)
		if i < 0 {
			return 0, false
		}
		head, rest := text[:i], text[i+len(mark):]
		text = rest
		if id != "" && !strings.HasSuffix(head, "communicator "+id) {
			continue
		}
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		r, err := strconv.Atoi(rest[:j])
		if err != nil {
			continue
		}
		return r, true
	}
}

// MaxRunningOps bounds the operations (Async ones, and blocking ones of
// several goroutines) running at once on one communicator on one rank;
// one beyond it fails, on every rank (its abort tells the others), with
// an error saying so.
const MaxRunningOps = 4096

// track registers o as running, or returns the abort error if the
// communicator was aborted, or the limit's if MaxRunningOps run (o must
// then not run).
func (c *Comm) track(o *operation) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.trackLocked(o)
}

// trackFirst is track for a call that has no earlier eager call to
// settle (settleDeferred): it reports false, without tracking o, if there
// is one; else it tracks o in the same hold of the lock, one where the
// call used to take two.
func (c *Comm) trackFirst(o *operation) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.eager.deferred; d != nil && d.order < o.order {
		return false, nil
	}
	return true, c.trackLocked(o)
}

// trackLocked is track under c.mu. It also notes whether a board
// Broadcast o may return early (boardSteady), as the communicator
// stands now.
func (c *Comm) trackLocked(o *operation) error {
	e := &c.eager
	o.steady = o.sync && c.abort.err == nil && !c.closed && e.running == 1 && e.deferred == nil && e.run >= eagerAfter && e.sig == o.hdr
	if c.abort.err != nil {
		return c.abort.err
	}
	if len(c.abort.live) >= MaxRunningOps {
		return fmt.Errorf("%d operations already running on this communicator (the limit, MaxRunningOps): wait for some", len(c.abort.live))
	}
	c.abort.live = append(c.abort.live, o)
	o.liveAt = len(c.abort.live)
	return nil
}

// untrack ends o's registration, records how it ended for the steady
// state (noteEndLocked), and returns the error its caller gets: err,
// made to wrap ErrAborted if the communicator was aborted. An error that
// carries a peer's abort of this communicator aborts it here too and is
// relayed to every rank.
func (c *Comm) untrack(o *operation, err error) error {
	c.mu.Lock()
	c.noteEndLocked(o, err)
	if i := o.liveAt - 1; i >= 0 { // tracked: the last one takes its place
		live := c.abort.live
		last := live[len(live)-1]
		live[i], last.liveAt = last, i+1
		live[len(live)-1] = nil
		c.abort.live, o.liveAt = live[:len(live)-1], 0
	}
	c.eager.running-- // entered at take (eagerState.enter)
	if len(c.abort.live) == 0 && c.abort.drained != nil {
		close(c.abort.drained)
		c.abort.drained = nil
	}
	aborted := c.abort.err
	c.mu.Unlock()
	if err == nil {
		return nil
	}
	if aborted == nil {
		r, ok := parseAbortRank(err.Error(), fmt.Sprintf("%#x", c.id))
		if !ok {
			return err
		}
		c.abortWith(r, true)
		aborted = c.Aborted()
	}
	if errors.Is(err, ErrAborted) {
		return err
	}
	return &abortWrapped{err: err, abort: aborted}
}

// abortWrapped is an operation's error on an aborted communicator: err,
// with the abort's text in front unless err already says it, and wrapping
// both (errors.Is(e, ErrAborted) holds).
type abortWrapped struct{ err, abort error }

func (e *abortWrapped) Error() string {
	if strings.Contains(e.err.Error(), strings.TrimPrefix(e.abort.Error(), "collective: ")) {
		return e.err.Error()
	}
	return e.abort.Error() + ": " + e.err.Error()
}

func (e *abortWrapped) Unwrap() []error { return []error{e.err, e.abort} }
