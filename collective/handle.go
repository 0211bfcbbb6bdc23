package collective

import (
	"context"
	"fmt"
)

// Handle is the completion of an operation issued with an Async form.
type Handle struct {
	done chan struct{}
	err  error
}

// Wait blocks until the operation has ended or ctx is done, and returns the
// operation's error (or ctx's). The operation itself is bounded by the
// context it was issued with; giving up on Wait does not stop it. Wait may be
// called any number of times, from any goroutine.
func (h *Handle) Wait(ctx context.Context) error {
	select {
	case <-h.done:
		return h.err
	case <-ctx.Done():
		return fmt.Errorf("gocoll: waiting for an operation: %w", ctx.Err())
	}
}

// Done returns a channel closed when the operation has ended.
func (h *Handle) Done() <-chan struct{} { return h.done }

// endedChan is the Done channel of every handle that ended before it was
// returned.
var endedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// okHandle is the handle of every operation that ended without error
// before its handle was returned. Such handles are never written.
var okHandle = &Handle{done: endedChan}

// failedHandle returns a handle that has already ended with err (nil for a
// blocking call that succeeded).
func failedHandle(err error) *Handle {
	if err == nil {
		return okHandle
	}
	return &Handle{done: endedChan, err: err}
}

// launch begins an operation in the caller's goroutine (taking its sequence
// number, so call order is operation order) and runs body: inline when sync,
// else in a goroutine of its own.
func (c *Comm) launch(ctx context.Context, h header, pairs func(int) (uint64, uint64), sync bool, body func(*operation) error) *Handle {
	o, err := c.begin(ctx, h)
	if err != nil {
		return failedHandle(err)
	}
	o.pairs = pairs
	return o.dispatch(sync, body)
}

// dispatch executes the operation inline when sync, else in a goroutine.
func (o *operation) dispatch(sync bool, body func(*operation) error) *Handle {
	o.sync = sync
	if sync {
		return failedHandle(o.execute(body))
	}
	hd := &Handle{done: make(chan struct{})}
	go func() {
		hd.err = o.execute(body)
		close(hd.done)
	}()
	return hd
}
