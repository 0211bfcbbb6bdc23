package collective

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Eager rooted calls. A rank that has nothing to receive in a rooted call
// (Broadcast's and Scatter's root, a direct Gather's senders) waits in the confirmed protocol only
// for the headers and empty messages that tell it every other rank
// matched; a receiver of a dissemination or direct Broadcast, once its
// data has come, waits only for those too. In steady state it does not
// wait for them: it posts its sends, with its buffer copied out (a
// receiver that forwards its data waits instead for the sends that read
// its buffer), sends its header to every peer it talks to, and returns;
// the operation stays open (deferred) and is settled, its
// headers checked and its requests waited for, at the rank's next call on
// the communicator (before that call sends anything), at Close, or at
// Abort. A mismatch found then fails that next call (or Close), with an
// error naming the earlier call, and that call's failure ends it on every
// rank. At most one call is deferred at a time, so the root runs at most
// one call ahead of its peers and holds at most one call's copy.
//
// Steady state: the communicator's last eagerAfter calls completed
// without error, stall or abort, and had the same header (operation,
// count, dtype, op, root, algorithm, chunk, channels) as this one, and
// this call is synchronous and the only one running. The first call of a
// header, and every call after a change of header, an error or a stall,
// runs the confirmed protocol, so a single mismatched call fails on every
// rank in that call. A Barrier that completes matched is no change: it
// has no arguments to mismatch and neither breaks nor extends the run of
// the calls around it (noteEndLocked), so a loop timed after a Barrier
// (a benchmark's: warm-up, Barrier, loop) is eager from its first call.
// A Barrier that fails or stalls ends the run, as any call. The wire traffic is the same either way: only when
// the root waits differs, so the ranks need not agree on it.
const eagerAfter = 3

// eagerCopyMax bounds the bytes an eager root copies out of its buffer
// (its data beyond what rides in the header messages, which are copied
// anyway): a larger call waits as in the confirmed protocol. With one
// call deferred at a time it is also the bound on the bytes an eager root
// holds for its peers.
const eagerCopyMax = 64 << 10

// eagerState is a communicator's record of its calls for the eager path,
// under Comm.mu.
type eagerState struct {
	sig      header        // the header of the last calls
	run      int           // how many in a row completed matched with sig
	deferred *operation    // an eager call not yet settled; nobody runs it
	returns  atomic.Uint64 // eager returns so far (tests count them); added to without mu
	running  int           // calls begun and not ended, the deferred one included
	issued   uint64        // calls begun so far: the last one's order
}

// enter counts a call begun (until untrack), under Comm.mu, and returns
// its order among the communicator's calls. Counting from the moment a
// call takes its number, not from when an Async call's goroutine starts,
// keeps a call from going eager ahead of one begun before it, which would
// then settle the later call and wait for it.
func (e *eagerState) enter() uint64 {
	e.running++
	e.issued++
	return e.issued
}

// noteEndLocked records how operation o ended, for the steady state;
// c.mu is held (untrack calls it).
func (c *Comm) noteEndLocked(o *operation, err error) {
	e := &c.eager
	h := o.hdr
	h.setUp = false // the board's set-up call counts as one of its calls
	switch {
	case err != nil || o.stalled:
		e.sig, e.run = header{}, 0
	case h.kind == KindBarrier: // matched, no arguments: keeps the run around it
	case h == e.sig:
		e.run++
	default:
		e.sig, e.run = h, 1
	}
}

// eagerReturn reports whether this call may return once this rank's
// buffer of bytes is reusable (a rank with nothing to receive) or holds
// its data (a Broadcast's receiver), and marks it so (see eagerAfter).
// Only the algorithm bodies that know how to run eagerly ask, once,
// before they send.
func (o *operation) eagerReturn(bytes int) bool {
	c := o.c
	if !o.sync || c.Size() < 2 || bytes > eagerCopyMax {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &c.eager
	if c.abort.err != nil || c.closed || e.running != 1 || e.deferred != nil ||
		e.run < eagerAfter || e.sig != o.hdr {
		return false
	}
	o.eager = true
	return true
}

// holdsBuffer reports whether a send of buf to peer, posted now, would
// refer to buf until the peer takes it: when buf is not empty and does
// not ride, copied, in this rank's header message (the pair's first
// message, small, with the header not yet sent). An eager rank that sends
// from its caller's buffer without a copy waits for such a send before it
// returns.
func (o *operation) holdsBuffer(peer int, buf []byte) bool {
	p := &o.peers[peer]
	return len(buf) > 0 && (p.announced || p.sendSeq > 0 || !o.inlines(peer, buf))
}

// eagerCopy returns buf, or a copy of it that the operation holds until
// it is settled when buf is larger than what rides in a header message
// (only there does a transport keep referring to it after the send).
func (o *operation) eagerCopy(buf []byte) []byte {
	if len(buf) <= inlineBytesMax {
		return buf
	}
	o.eagerLease = o.c.tempBuffer(len(buf))
	copy(o.eagerLease.buf, buf)
	return o.eagerLease.buf
}

// deferEnd ends the body of an eager call: it sends this rank's header to
// every peer that lacks it (a peer's finish may wait for it), posts the
// receives a peer's sends may wait for (postFirstEarly), and leaves the
// operation to settleDeferred, bounded by its own deadline (its context's,
// else Config.Timeout's). On a communicator aborted or closed meanwhile
// (Abort's or Close's settleDeferred may have come first) it ends the
// operation now instead, returning its error.
func (o *operation) deferEnd() error {
	o.touchPartners()
	o.announceTouched()
	o.postFirstEarly()
	if dl, ok := o.ctx.Deadline(); ok && o.deadline.IsZero() { // settled under another context
		o.deadline = dl
	}
	c := o.c
	if testHookDeferEnd != nil {
		testHookDeferEnd(c)
	}
	return c.deferOrEnd(o, true)
}

// testHookDeferEnd, if set (by tests only, before any call), runs in
// deferEnd before the call is deferred: where an Abort or Close may race.
var testHookDeferEnd func(*Comm)

// deferOrEnd makes o the communicator's deferred eager call (counting an
// eager return if returned: o's first deferral, not a settle's put-back),
// or, if the communicator is aborted or closed (its Abort or Close may
// have looked for one already) or another call began since o (on its
// first deferral), ends it at once, waiting under o.ctx without its
// cancellation (o's deadline bounds it), and returns its error.
func (c *Comm) deferOrEnd(o *operation, returned bool) error {
	c.mu.Lock()
	// A call begun since o took its number (an Async one from another
	// goroutine) has looked for a deferred call to settle and found none:
	// o cannot return early, or that call would send before o is settled.
	raced := returned && c.eager.issued != o.order
	if c.abort.err == nil && !c.closed && !raced {
		c.eager.deferred = o
		if returned {
			c.eager.returns.Add(1)
		}
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	o.ctx = context.WithoutCancel(o.ctx)
	return o.end(o.finish())
}

// errSettleInterrupted is what fail returns, without failing the
// operation, when the context of the later call settling it ended
// (interrupted).
var errSettleInterrupted = errors.New("collective: settling an eager call interrupted")

// interrupted reports whether err, about to fail o, is only the end of
// the context of the later call settling o (settleDeferred), before o's
// own deadline: o is then not failed but stays deferred.
func (o *operation) interrupted(err error) bool {
	if !o.settling || o.ctx.Err() == nil || !time.Now().Before(o.deadline) {
		return false
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// settleDeferred settles the communicator's deferred eager call, if any,
// and if it came before caller (nil for Close and Abort, which settle any):
// it checks every header and waits for every request, as finish does, and
// ends the call. It waits until the deferred call's own deadline, under
// ctx, whose end does not fail the deferred call: if ctx ends first, that
// call is neither failed nor ended but stays deferred (the next call,
// Close or Abort settles it), and settleDeferred returns ctx's error,
// which fails caller (without allocating: a context derived from ctx
// would cost every call after an eager one). Else it returns the deferred call's error, saying that the
// call had returned early.
func (c *Comm) settleDeferred(ctx context.Context, caller *operation) error {
	c.mu.Lock()
	o := c.eager.deferred
	if o == nil || caller != nil && o.order >= caller.order {
		c.mu.Unlock()
		return nil
	}
	c.eager.deferred = nil
	c.mu.Unlock()
	seq := o.key.Op
	// Under ctx, whose end only interrupts the wait (interrupted); o's own
	// deadline (onTick) is what fails o.
	o.ctx, o.settling = ctx, true
	err := o.finish()
	o.settling = false
	if err == errSettleInterrupted {
		o.ctx = context.WithoutCancel(ctx)
		if derr := c.deferOrEnd(o, false); derr != nil {
			err = derr
		} else {
			return fmt.Errorf("waiting to settle an earlier call (operation #%d), which had returned on this rank once its buffer was reusable: %w", seq, context.Cause(ctx))
		}
	} else {
		err = o.end(err)
	}
	if err != nil {
		return fmt.Errorf("an earlier call on this communicator (operation #%d), which had returned on this rank once its buffer was reusable, failed: %w", seq, err)
	}
	return nil
}

// EagerReturns counts the calls of this communicator, on this rank, that
// returned once the rank's buffer was reusable, before hearing that every
// other rank matched (see the package documentation, "What a call
// guarantees on return"). It is a diagnostic: how often the steady-state
// fast path of rooted operations was taken.
func (c *Comm) EagerReturns() uint64 { return c.eager.returns.Load() + c.BoardLeanCalls() }
