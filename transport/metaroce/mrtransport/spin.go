package mrtransport

import (
	"cmp"
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/internal/spinwait"
	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

// spinBatch is the most datagrams a spinning waiter reads from one socket
// at a time.
const spinBatch = 4

// spinner lets a goroutine that waits for a request read the path sockets
// itself for a while (Config.SpinWait) instead of sleeping until a reader
// goroutine, woken by the runtime's poller, completes the request: on a
// host where ranks outnumber cores, the wake-up of a sleeping process
// costs more than the rest of a small message's trip. One waiter reads at
// a time; the others only yield. (Letting only one waiter spin and the
// others sleep at once was tried: bench/rss.sh's MetaRoCE storm then
// failed with false peer timeouts in 4 of 5 runs on a quiet machine,
// against 0 of 3 without it.) The readers stay: whichever of a reader and
// a waiter reads a datagram first handles it, the same way.
type spinner struct {
	// bulk scales the spin budget of a wait for anything but a small
	// receive to how often such spins paid lately (spinwait.Gauge). Not
	// under mu.
	bulk spinwait.Gauge

	// admit decides which waiters spin (spinAdmit.enter); not under mu.
	admit spinAdmit

	mu     sync.Mutex // one waiter reads at a time; guards the fields below
	poller *udpio.Poller
	// slots are the sockets poller watches, by its index: a path's
	// first socket at the path's index, each later one (a re-pick's, in
	// spinAdd) at a new index, so that a replaced socket, read until it
	// retires, is read by its own reader.
	slots []spinSlot
	ready []int
	rd    []udpio.Message // scratch for readers' batches (the engine's batch)
	ms    []Message       // a waiter's batch (spinBatch)
}

// spinSlot is a socket the spinner reads, on a path.
type spinSlot struct {
	path int
	r    *udpio.TryReader
	s    *udpioSocket
}

var (
	_ transport.Spinner      = (*request)(nil)
	_ transport.Completer    = (*request)(nil)
	_ transport.AnySpinner   = (*Endpoint)(nil)
	_ transport.JointSpinner = (*Endpoint)(nil)
)

// newSpinner returns a spinner over socks, or nil where a waiter cannot
// read them itself: some socket is not a udpio socket (simulated or
// interposed sockets), or the system has no Poller.
func newSpinner(socks []PathSocket, batch int) *spinner {
	us := make([]*udpio.Socket, len(socks))
	for i, s := range socks {
		u, ok := s.(*udpioSocket)
		if !ok {
			return nil
		}
		us[i] = u.s
	}
	p, err := udpio.NewPoller(us)
	if err != nil {
		return nil
	}
	batch = max(batch, spinBatch)
	sp := &spinner{poller: p, rd: make([]udpio.Message, batch), ms: make([]Message, spinBatch)}
	for i, u := range us {
		sp.slots = append(sp.slots, spinSlot{i, udpio.NewTryReader(u, batch), socks[i].(*udpioSocket)})
	}
	for i := range sp.ms {
		sp.ms[i].Buf = make([]byte, ReadBufferSize)
	}
	return sp
}

// Spin implements transport.Spinner: it reads the path sockets in the
// caller's goroutine until r completes, ctx ends or its spin budget has
// passed: smallSpinFactor times Config.SpinWait for a receive of at most
// smallSpinBytes; for the rest (bulk), Config.SpinWait scaled down by the
// spinner's gauge while bulk spins have lately been wasted
// (spinwait.Gauge). A bulk piece that comes at a WAN's pace, ms after the
// wait began, is caught by no spin, and the spin's yields cost the ranks
// that copy and reduce meanwhile. A small message's spin is what keeps its
// latency where ranks outnumber cores, and the gauge cannot judge it: a
// waiter that stopped spinning is completed by a reader, late by that
// reader's wake-up, so every cut spin would look wasted.
func (r *request) Spin(ctx context.Context) bool {
	if r.fin.Load() {
		return true
	}
	if r.ep == nil || r.ep.eng.spin == nil || r.ep.cfg.SpinWait <= 0 {
		return false
	}
	e := r.ep.eng
	if !e.spin.admit.enter(r.smallRecv) {
		e.st.spinsSkipped.Add(1)
		return r.fin.Load()
	}
	if r.smallRecv {
		paid := spinwait.UntilFunc(ctx, r.fin.Load, r.ep.cfg.SpinWait*smallSpinFactor, e.spinPoll)
		e.spin.admit.leave(true, paid)
		return paid
	}
	g := &e.spin.bulk
	budget, spare := g.Budget(r.ep.cfg.SpinWait)
	paid := spinwait.UntilFunc(ctx, r.fin.Load, budget, e.spinPoll)
	e.spin.admit.leave(false, paid)
	if paid {
		g.Paid()
		e.st.spinsPaid.Add(1)
		return true
	}
	// The request's completion (finish) tells whether a spin of the
	// whole budget would have caught it.
	r.gaveUp(spare)
	return false
}

// gaveUp records that a waiter gave up spinning on r, spare short of the
// whole budget, for learn. A waiter on several requests (SpinAny: the
// trees' awaitAny) gives up on the same one again and again, and may do so
// just as it completes, while finish reads both fields under the engine's
// lock: both are atomic, and the latest give-up counts. (A learn that
// reads one give-up's time with the next one's spare is still a fair
// guess.)
func (r *request) gaveUp(spare time.Duration) {
	r.spinSpare.Store(int64(spare))
	r.spunOut.Store(int64(time.Since(r.ep.eng.start)))
}

// learn is called as a request that gave up spinning completes (under the
// engine's lock, now being the engine's latest time): it moves the bulk
// gauge.
func (r *request) learn(now time.Duration) {
	out := r.spunOut.Load()
	if out == 0 || r.ep == nil || r.ep.eng.spin == nil {
		return
	}
	if r.ep.eng.spin.bulk.Learn(time.Duration(r.spinSpare.Load()), now-time.Duration(out)) {
		r.ep.eng.st.spinsPaid.Add(1)
	} else {
		r.ep.eng.st.spinsWasted.Add(1)
	}
}

// A receive of at most smallSpinBytes spins smallSpinFactor times
// Config.SpinWait: a small message comes as soon as its sender runs,
// while a waiter that spins through a bulk transfer takes the processor
// from the ranks that copy it. 4 ranks on 2 vCPUs, medians of 5 and 6
// interleaved runs with 200 us against 50 us for every receive: 8-byte
// AllReduce 101 against 133 us and 121 against 150, but 64 KiB 640
// against 522 us and 1 MiB 3.9 against 3.8 ms; with this rule instead,
// medians of 8 runs: 8 B 169/128 us (out of place/in place) against
// 206/140, 1 KiB 209/205 against 220/225, 64 KiB 507/467 against 479/455.
const (
	smallSpinBytes  = 4 << 10
	smallSpinFactor = 4
)

// spinRead reads whatever the path sockets hold, without waiting, and
// feeds it to the core as a reader would. It leaves the sockets to the
// readers while the core places payloads (a bulk transfer: readers read
// those straight into their receive buffers), and while another waiter
// reads.
func (e *engine) spinRead() {
	sp := e.spin
	if e.placing.Load() || !sp.mu.TryLock() {
		return
	}
	defer sp.mu.Unlock()
	n, _, _, _ := e.readReady(sp, sp.ms)
	e.st.spinBatches.Add(int64(n))
}

// spinPoll is one round of a waiter's spin: spinRead, then the other
// transports of a route (spinAlso, transport.JointSpinner).
func (e *engine) spinPoll() {
	e.spinRead()
	if also := e.spinAlso.Load(); also != nil {
		(*also)()
	}
}

// SpinStep implements transport.JointSpinner: it reads the path sockets
// once, as a round of a waiter's spin does (spinRead), where waiters can
// read them.
func (ep *Endpoint) SpinStep() {
	if ep.eng.spin != nil {
		ep.eng.spinRead()
	}
}

// SetSpinAlso implements transport.JointSpinner: every round of a
// waiter's spin (Spin, SpinAny) calls also after reading the sockets.
func (ep *Endpoint) SetSpinAlso(also func()) {
	if also == nil {
		ep.eng.spinAlso.Store(nil)
		return
	}
	ep.eng.spinAlso.Store(&also)
}

// readReady reads one batch (up to len(ms) datagrams, into ms) from each
// socket that has something waiting, without waiting, and feeds it to the
// core as a reader would (for a waiter, spinRead; a late timer's drain;
// the endpoint reader: each counts its own). It reports how many datagram
// batches it handled, whether some socket was ready (ready with no batch
// means only errors were found, or only skipped sockets), how many ready
// sockets it skipped, and whether some batch was full (more may wait).
// The caller holds sp.mu. It skips a socket whose reader holds its
// peekLock: that reader may have peeked at the datagram it is about to
// read into place, and another read between would take it; a caller that
// loops must yield to that reader (it needs the processor to read). (The
// caller's check that the core is not placing is not enough: placing may
// begin while it reads.)
func (e *engine) readReady(sp *spinner, ms []Message) (batches int, anyReady bool, skipped int, full bool) {
	return e.readSlots(sp.poller, sp.slots, &sp.ready, sp.rd, ms)
}

// readSlots is readReady over poller's sockets slots (sp's, or a copy
// of their slice taken under sp.mu), with the scratch ready and rd, which
// the caller owns: the endpoint reader reads so without sp.mu. The batches
// of one pass are fed to the core under one lock and processed once
// (engine.feed), so that what they call for is polled and written
// together: one write per path for the pass, not one per batch and path
// (the endpoint reader found 2.4 sockets with a batch a pass in the
// two-site lab, bench/results/cpu_lab/cpu29.md). The sockets after the
// first are read under mu.
func (e *engine) readSlots(poller *udpio.Poller, slots []spinSlot, readyBuf *[]int, rd []udpio.Message, ms []Message) (batches int, anyReady bool, skipped int, full bool) {
	ready, err := poller.Ready((*readyBuf)[:0])
	*readyBuf = ready
	if err != nil {
		return 0, false, 0, false
	}
	locked := false
	var now time.Duration
	flush := func() { // process what was fed, write what it calls for
		if locked {
			e.process(now)
			e.unlock()
			locked = false
		}
	}
	defer flush()
	for _, slot := range ready {
		if slot < 0 || slot >= len(slots) {
			continue
		}
		sl := slots[slot]
		pl := sl.s.peekLock()
		if !pl.TryLock() {
			skipped++
			continue
		}
		n, err := readMessages(ms, rd, sl.r.ReadBatch)
		pl.Unlock()
		if err != nil || n == 0 {
			// An error, or a socket ready with nothing to read: a port
			// unreachable may wait in its error queue (its pending
			// error is reported once, to whichever call comes first).
			if !errors.Is(err, net.ErrClosed) {
				flush() // handleRefused takes mu
				e.handleRefused(e.drainIfPending(sl.s, err != nil, nil))
			}
			continue
		}
		batches++
		full = full || n == len(ms)
		if !locked {
			e.lock()
			if e.closed {
				e.mu.Unlock()
				return batches, false, skipped, full
			}
			locked = true
		}
		now = e.feed(sl.path, ms[:n])
	}
	return batches, len(ready) > 0, skipped, full
}

// Completed implements transport.Completer.
func (r *request) Completed() bool { return r.fin.Load() }

// SpinAny implements transport.AnySpinner: it reads the path sockets, as
// Spin does, until one of reqs (or the requests they wrap:
// transport.Unwrap) has completed, with Spin's budget: the
// small one if one of this endpoint's pending requests is a small receive,
// else the bulk gauge's, which learns from the first pending bulk request
// (as from a Spin on it) when the spin gives up.
func (ep *Endpoint) SpinAny(ctx context.Context, reqs []transport.Request) int {
	if i := transport.CompletedAny(reqs); i >= 0 || ep.eng.spin == nil || ep.cfg.SpinWait <= 0 {
		return i
	}
	var first *request // this endpoint's first pending request
	small := false
	for _, q := range reqs {
		if r, ok := transport.Unwrap(q).(*request); ok && r.ep == ep {
			first = cmp.Or(first, r)
			small = small || r.smallRecv
		}
	}
	if first == nil {
		return -1
	}
	e, i := ep.eng, -1
	if !e.spin.admit.enter(small) {
		e.st.spinsSkipped.Add(1)
		return -1
	}
	done := func() bool {
		i = transport.CompletedAny(reqs)
		return i >= 0
	}
	if small {
		e.spin.admit.leave(true, spinwait.UntilFunc(ctx, done, ep.cfg.SpinWait*smallSpinFactor, e.spinPoll))
		return i
	}
	g := &e.spin.bulk
	budget, spare := g.Budget(ep.cfg.SpinWait)
	paid := spinwait.UntilFunc(ctx, done, budget, e.spinPoll)
	e.spin.admit.leave(false, paid)
	if paid {
		g.Paid()
		e.st.spinsPaid.Add(1)
		return i
	}
	first.gaveUp(spare)
	return -1
}
