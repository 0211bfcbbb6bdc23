package collective

import (
	"context"
	"reflect"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// await waits for r, a request to or from peer (-1: several or unknown).
// It first sends this rank's header to every touched
// peer that lacks it. While it waits it looks, at growing intervals, at the
// headers that have arrived from other peers, so that a mismatch elsewhere
// ends this wait instead of leaving it to the deadline; from the first look
// on, the tree neighbours have this rank's header too. It fails with
// context.DeadlineExceeded once the operation's Config.Timeout bound has
// passed (ctx's own deadline ends it through ctx). One timer per operation,
// made on the first wait that blocks, serves both: an operation that never
// blocks (its messages were there, or came while it polled) costs none.
// A wait that has lasted lookAfter writes its state to the flight record
// at every look, and one that takes the operation past
// Config.StallTimeout reports the stall once and goes on waiting. Over an
// endpoint that must see every wait (transport.AnyWaiter), it waits as
// awaitAny does.
func (o *operation) await(r transport.Request, peer int) (int, error) {
	o.touchFarPartners()
	o.announceTouched()
	if _, ok := o.c.ep.(transport.AnyWaiter); ok { // a simulated fabric's Spin would wait without ticks
		if _, err := o.awaitFirst([]transport.Request{r}, peer); err != nil {
			return 0, err
		}
		return r.Wait(o.ctx)
	}
	if s, ok := r.(transport.Spinner); ok {
		if s.Spin(o.ctx) { // returns at once if r completed (no Done channel made)
			return r.Wait(o.ctx)
		}
	} else {
		select {
		case <-r.Done():
			return r.Wait(o.ctx)
		default:
		}
	}
	lw := o.longWait()
	defer o.timer.Stop()
	for {
		select {
		case <-r.Done():
			return r.Wait(o.ctx)
		case <-o.ctx.Done():
			return r.Wait(o.ctx)
		case <-lw.tick:
			if err := o.onTick(&lw, peer); err != nil {
				return 0, err
			}
		}
	}
}

// longWait is a wait that did not end at once: when it started, and the
// operation's timer's next tick.
type longWait struct {
	start    time.Time
	interval time.Duration
	tick     <-chan time.Time
}

// longWait arms the operation's timer for a wait that begins now.
func (o *operation) longWait() longWait {
	return longWait{start: time.Now(), interval: time.Millisecond, tick: o.armTimer(time.Millisecond)}
}

// onTick is a long wait's tick (see await): the deadline, the flight
// record and the stall report, the headers of the other peers; then it
// arms the next tick.
func (o *operation) onTick(lw *longWait, peer int) error {
	now := time.Now()
	if !o.deadline.IsZero() && !now.Before(o.deadline) {
		return context.DeadlineExceeded
	}
	if now.Sub(lw.start) >= lookAfter {
		o.look(peer, lw.start)
		o.checkStall(now)
	}
	o.touchPartners()
	o.announceTouched()
	if err := o.scanHeaders(); err != nil {
		return err
	}
	if err := o.boardPeek(); err != nil { // peers that took the board for this call
		return err
	}
	lw.interval = min(2*lw.interval, 100*time.Millisecond)
	lw.tick = o.armTimer(lw.interval)
	return nil
}

// awaitAny waits, as await does, until one of reqs has completed, and
// returns its index; the caller then takes it with its own wait, which
// returns at once. Over an endpoint that must see every wait
// (transport.AnyWaiter) the endpoint waits, woken at every tick; else the
// endpoint first polls for the requests in this goroutine, as await's
// Spin does (transport.AnySpinner), and then this rank selects on their
// Done channels. Every tick (onTick) checks the deadline and the other
// peers' headers, as await's do.
func (o *operation) awaitAny(reqs []transport.Request) (int, error) {
	return o.awaitFirst(reqs, -1)
}

// awaitFirst is awaitAny for requests to or from peer (-1: several or
// unknown), which a long wait names in the flight record.
func (o *operation) awaitFirst(reqs []transport.Request, peer int) (int, error) {
	o.touchFarPartners()
	o.announceTouched()
	if i := transport.CompletedAny(reqs); i >= 0 {
		return i, nil
	}
	w, waits := o.c.ep.(transport.AnyWaiter)
	if s, ok := o.c.ep.(transport.AnySpinner); ok && !waits {
		if i := s.SpinAny(o.ctx, reqs); i >= 0 {
			return i, nil
		}
	}
	lw := o.longWait()
	defer o.timer.Stop()
	for {
		var i int
		if waits {
			i = w.WaitAny(o.ctx, reqs, lw.tick)
		} else {
			i = selectAny(o.ctx, reqs, lw.tick)
		}
		if i >= 0 {
			return i, nil
		}
		if err := o.ctx.Err(); err != nil {
			return -1, err
		}
		if err := o.onTick(&lw, peer); err != nil {
			return -1, err
		}
	}
}

// selectAny blocks until one of reqs has completed, ctx is done or tick
// fires, and returns the index of a completed one, or -1. Two requests
// (one channel's two trees) take a select statement, which allocates
// nothing; more take reflect.Select.
func selectAny(ctx context.Context, reqs []transport.Request, tick <-chan time.Time) int {
	if len(reqs) == 2 {
		select {
		case <-reqs[0].Done():
			return 0
		case <-reqs[1].Done():
			return 1
		case <-ctx.Done():
		case <-tick:
		}
		return -1
	}
	cases := make([]reflect.SelectCase, len(reqs)+2)
	for i, r := range reqs {
		cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(r.Done())}
	}
	cases[len(reqs)] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}
	cases[len(reqs)+1] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(tick)}
	if i, _, _ := reflect.Select(cases); i < len(reqs) {
		return i
	}
	return -1
}

// armTimer sets the operation's timer to fire after d, or at the
// operation's Config.Timeout bound if that comes first, and returns its
// channel.
func (o *operation) armTimer(d time.Duration) <-chan time.Time {
	if !o.deadline.IsZero() {
		d = min(d, time.Until(o.deadline))
	}
	if o.timer == nil {
		o.timer = time.NewTimer(d)
	} else {
		o.timer.Reset(d)
	}
	return o.timer.C
}
