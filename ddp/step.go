package ddp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
)

// step is the state of the current training step.
type step struct {
	marked []bool // parameter i marked ready
	next   int    // the next bucket to start
	weight float64
	// weights is the AllReduce of the ranks' weights, started with bucket 0.
	weights    []float64
	weightOp   *inflight
	err        error // the first error of a Ready, returned by Wait
	hasStarted bool  // a Ready or a bucket happened in this step
}

// inflight is one started AllReduce and when it started and ended.
type inflight struct {
	h     *collective.Handle
	start time.Time
	end   time.Time     // written before ended closes
	ended chan struct{} // closed once end is set
}

// startOp follows the operation of h, started at start, to record its end.
func startOp(h *collective.Handle, start time.Time) *inflight {
	op := &inflight{h: h, start: start, ended: make(chan struct{})}
	go func() {
		<-h.Done()
		op.end = time.Now()
		close(op.ended)
	}()
	return op
}

// wait waits for the operation's end (and its time) and returns its error.
func (op *inflight) wait(ctx context.Context) error {
	select {
	case <-op.ended:
		return op.h.Wait(ctx)
	case <-ctx.Done():
		return fmt.Errorf("ddp: waiting for a gradient AllReduce: %w", ctx.Err())
	}
}

// resetStep starts a new step: nothing ready, weight 1.
func (m *Model) resetStep() {
	marked := m.step.marked
	if marked == nil {
		marked = make([]bool, len(m.params))
	}
	clear(marked)
	m.step = step{marked: marked, weight: 1, weights: make([]float64, 1)}
	for _, b := range m.buckets {
		b.pending = len(b.params)
		b.op = nil
	}
}

// SetWeight sets this rank's weight in the current step's average (default
// 1; see the package doc): Wait divides the summed gradients by the summed
// weights. It must come before the step's first bucket starts.
func (m *Model) SetWeight(w float64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !(w >= 0 && w <= 1<<53) {
		return fmt.Errorf("ddp: weight %v out of range [0, 2^53]", w)
	}
	if m.step.next > 0 {
		return errors.New("ddp: SetWeight after the step's first bucket started")
	}
	m.step.weight = w
	return nil
}

// Ready says that parameter i's gradient is final for this step. When its
// bucket is complete, and every bucket before it has started, the bucket's
// AllReduce starts, under ctx. Marking a parameter twice in one step, or an
// index out of range, is an error (also returned by Wait). From Ready(i)
// until Wait returns, Grad(i) belongs to the communication: do not write
// it. Inside NoSync Ready does nothing.
func (m *Model) Ready(ctx context.Context, i int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.broken != nil {
		return m.broken
	}
	if m.noSync > 0 {
		return nil
	}
	if i < 0 || i >= len(m.params) {
		return m.fail(fmt.Errorf("ddp: Ready(%d): %d parameters registered", i, len(m.params)))
	}
	if m.step.marked[i] {
		return m.fail(fmt.Errorf("ddp: parameter %d (%s) marked ready twice in one step", i, m.params[i].Name))
	}
	m.step.marked[i] = true
	m.step.hasStarted = true
	m.buckets[m.bucket[i]].pending--
	m.startReady(ctx)
	return nil
}

// fail records the step's first error and returns err.
func (m *Model) fail(err error) error {
	if m.step.err == nil {
		m.step.err = err
	}
	return err
}

// startReady starts, in order, the complete buckets from step.next on.
func (m *Model) startReady(ctx context.Context) {
	for m.step.next < len(m.buckets) && m.buckets[m.step.next].pending == 0 {
		m.start(ctx, m.buckets[m.step.next])
		m.step.next++
	}
}

// start starts b's AllReduce (and, with the first bucket, the weights').
func (m *Model) start(ctx context.Context, b *bucket) {
	now := time.Now()
	m.startWeights(ctx, now)
	if m.cfg.BF16 {
		for k, g := range b.grad {
			b.wire[k] = dtype.BFloat16FromFloat32(g)
		}
		b.op = startOp(collective.AllReduceAsync(ctx, m.comm, b.wire, b.wire, collective.Sum), now)
		return
	}
	b.op = startOp(collective.AllReduceAsync(ctx, m.comm, b.grad, b.grad, collective.Sum), now)
}

// startWeights starts the AllReduce of the ranks' weights, if not yet.
func (m *Model) startWeights(ctx context.Context, now time.Time) {
	if m.step.weightOp == nil {
		m.step.weights[0] = m.step.weight
		w := m.step.weights
		m.step.weightOp = startOp(collective.AllReduceAsync(ctx, m.comm, w, w, collective.Sum), now)
	}
}

// Wait ends the step: it starts every bucket not yet started, waits for
// all, and leaves in each Grad(i) the sum over the ranks divided by the sum
// of their weights. Call it before the optimizer step. Inside NoSync it does
// nothing. On an error the gradients are not to be used; the next step
// starts afresh, unless ctx ended with operations in flight, which breaks
// the Model.
func (m *Model) Wait(ctx context.Context) error {
	_, err := m.wait(ctx)
	return err
}

// wait is Wait, also returning the summed weight.
func (m *Model) wait(ctx context.Context) (float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.broken != nil {
		return 0, m.broken
	}
	if m.noSync > 0 {
		return 0, nil
	}
	waitStart := time.Now()
	for _, b := range m.buckets {
		b.pending = 0
	}
	m.startReady(ctx)
	ops := []*inflight{m.step.weightOp}
	var errs []error
	for _, b := range m.buckets {
		ops = append(ops, b.op)
	}
	for _, op := range ops {
		if err := op.wait(ctx); err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				m.broken = fmt.Errorf("ddp: a Wait gave up with gradient AllReduces in flight: %w", ctx.Err())
				return 0, m.broken
			}
		}
	}
	total := m.step.weights[0]
	if err := errors.Join(append([]error{m.step.err}, errs...)...); err != nil {
		m.resetStep()
		return 0, err
	}
	for _, b := range m.buckets {
		m.finish(b, total)
	}
	m.stats.add(ops, waitStart, time.Now())
	m.resetStep()
	return total, nil
}

// finish turns b's reduced sum into the weighted average in b.grad.
func (m *Model) finish(b *bucket, total float64) {
	if m.cfg.BF16 {
		for k, v := range b.wire {
			b.grad[k] = v.Float32()
		}
	}
	if total == 0 { // every rank has joined: zeros, not 0/0
		clear(b.grad)
		return
	}
	d := float32(total)
	for k := range b.grad {
		b.grad[k] /= d
	}
}

// NoSync runs f with synchronisation off (see the package doc): gradients
// accumulate in Grad until a step outside NoSync. It is an error to begin
// NoSync in a step that has marked a parameter ready.
func (m *Model) NoSync(f func() error) error {
	m.mu.Lock()
	if m.step.hasStarted {
		m.mu.Unlock()
		return errors.New("ddp: NoSync inside a step that has already marked parameters ready")
	}
	m.noSync++
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.noSync--
		m.mu.Unlock()
	}()
	return f()
}

// Join is for a rank that has run out of batches (see the package doc).
// Until every rank has called Join, it takes part in the others' steps with
// zero gradients and weight 0 and, after each, calls step (if not nil) with
// the average in Grad, as the optimizer step of the others'. It returns
// nil on every rank once every rank has joined, or the first error. Each
// round first sums the weights alone: the last, where every rank is in
// Join, moves those 8 bytes and no gradients.
func (m *Model) Join(ctx context.Context, step func() error) error {
	m.mu.Lock()
	inNoSync := m.noSync > 0
	m.mu.Unlock()
	if inNoSync {
		return errors.New("ddp: Join inside NoSync")
	}
	for {
		m.ZeroGrad()
		if err := m.SetWeight(0); err != nil {
			return err
		}
		if done, err := m.allJoined(ctx); done || err != nil {
			return err
		}
		if _, err := m.wait(ctx); err != nil {
			return err
		}
		if step != nil {
			if err := step(); err != nil {
				return err
			}
		}
	}
}

// allJoined starts the step's weights alone and waits for their sum: 0
// means every rank is in Join, and then no rank starts the buckets (ranks
// still training start them with the weights, so they sum to more than 0).
func (m *Model) allJoined(ctx context.Context) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.broken != nil {
		return false, m.broken
	}
	m.startWeights(ctx, time.Now())
	if err := m.step.weightOp.wait(ctx); err != nil {
		if ctx.Err() != nil {
			m.broken = fmt.Errorf("ddp: Join gave up with an AllReduce in flight: %w", ctx.Err())
			return false, m.broken
		}
		m.resetStep()
		return false, err
	}
	if m.step.weights[0] != 0 {
		return false, nil
	}
	m.resetStep()
	return true, nil
}
