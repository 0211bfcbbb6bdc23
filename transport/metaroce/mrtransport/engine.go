package mrtransport

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
)

// engine drives one MetaRoCE core over real sockets and the real clock. It
// is the only part of MetaRoCE with goroutines: one reader per path socket,
// and one that runs the timer. Everything that touches the core runs under mu:
// a reader feeds its whole batch of datagrams to the core under one lock,
// hands the core's events to the endpoint and polls the datagrams the core
// has ready, all before unlocking; then it writes them out. So a datagram's
// answer (an ACK, the next window of DATA) leaves from the reader's
// goroutine without a hand-off to another goroutine. API calls (Send, Recv,
// Cancel, Abort) do the same from the caller's goroutine.
//
// A single engine goroutine fed by channels was the alternative; it adds a
// goroutine wake-up (a few microseconds) to every datagram and every call,
// which is a large part of an 8-byte message's latency on loopback.
//
// Writes happen outside mu, so that one goroutine's system call overlaps
// another's work in the core, and two goroutines write on different
// paths' sockets at once; but on each path in the order the datagrams
// were polled (a ticket per batch and path), because a path's packets
// must leave in sequence order: reordering within a path would look like
// loss to the core.
type engine struct {
	mu    sync.Mutex
	apiMu sync.Mutex // application calls queue here before mu (lockAPI)
	core  *metaroce.Endpoint
	socks []PathSocket // the sockets Listen opened, by path; see sock
	// cur is each path's socket now: socks[i] until a re-pick replaced it
	// (repick.go). Writers load it after their turn on the path.
	cur []atomic.Pointer[sockRef]
	// retiring are replaced sockets still open (and read) until their
	// peers know the new ones; guarded by mu.
	retiring    []retiree
	retireSeq   uint64
	retireAfter time.Duration // how long; retireAfter but in tests
	start       time.Time
	last        time.Duration   // latest time fed to the core; never goes back
	arrived     []time.Duration // latest arrival handed to the core, by path (arrival.go)
	// arrivalTimes is Config.ArrivalTimes: without it every arrival is now.
	arrivalTimes bool
	// offset is the wall clock less the monotonic one (since start) at the
	// read at offsetAt, to tell a step of the wall clock (arrival.go).
	offset, offsetAt time.Duration
	offsetSeen       bool
	// stepAt is the engine time of the latest read that saw the wall clock
	// step (stepSeen: there was one): a stamp converted to before it was
	// taken before the step, whichever path reads it (arrival.go).
	stepAt   time.Duration
	stepSeen bool

	// route maps a transmit's (peer node id, path) to the peer socket's
	// address, and nodeAt a peer socket's address back to the node id;
	// handle receives every core event; afterInput runs first in every
	// process. All run under mu.
	route      func(peer uint64, path int) (netip.AddrPort, bool)
	nodeAt     func(addr netip.AddrPort) (uint64, bool)
	handle     func(now time.Duration, ev metaroce.Event)
	afterInput func(now time.Duration)

	// timer is read by one goroutine (timerLoop) for the engine's life,
	// not a time.AfterFunc, which starts a goroutine per firing (and
	// grows its stack again each time: onTimer runs deep).
	timer     *time.Timer
	armed     time.Duration // deadline the timer is set for; -1: stopped
	timerStop chan struct{} // closed by stop: timerLoop returns

	batch, maxDatagram int
	gatherMin          int        // PollTransmitVec's minGather: 0 unless every socket gathers
	controlClass       uint8      // Config.ControlDSCP, the class of control datagrams
	pending            *txBatch   // polled under mu, written by unlock
	free               []*txBatch // batches to reuse
	txNext             []uint64   // by path: ticket of the next batch with datagrams on it

	// writing are the batches with gathered datagrams being written
	// (handed to write, mu released, not yet recycled); wrote, on mu, is
	// broadcast when the requests they held are let go, if holdWaiters
	// (Cancels) wait for that. heldwrite.go.
	writing     []*txBatch
	wrote       sync.Cond
	holdWaiters int

	txMu   sync.Mutex // guards txTurn
	txCond *sync.Cond
	txTurn []uint64 // by path: ticket of the batch whose turn it is to write on it

	closed  bool
	placers bool // some reader can place payloads (canPlace)
	// coalesce is Config.CoalesceWait where the endpoint reader runs
	// (setCoalesce), else 0; far tells it far peers (coalesce.go).
	coalesce time.Duration
	far      farState
	placing  atomic.Bool    // the core's Placing, as of the last unlock; only with placers
	readers  sync.WaitGroup // the readers and timerLoop
	// sockReaders are the socket readers run started, which takeOver
	// stops (handingOver) for the endpoint reader.
	sockReaders sync.WaitGroup
	handingOver atomic.Bool
	spin        *spinner // nil: waiters cannot read the sockets themselves
	// spinAlso, set by Endpoint.SetSpinAlso, is called in every round of
	// a waiter's spin, after its own read (spinPoll).
	spinAlso atomic.Pointer[func()]
	st       engineCounters
	stall    stallNote // what the timer said of the core's stalls (stallnote.go)
	// onHold, set by tests only, runs (under mu) each time a request's
	// end waits for a write of its payload (heldwrite.go).
	onHold func()
}

// engineCounters are the engine's own counters, readable without mu.
type engineCounters struct {
	datagramsRead, bytesRead       atomic.Int64
	datagramsPlaced                atomic.Int64 // read into a receive buffer
	datagramsWritten, bytesWritten atomic.Int64
	readBatches, writeBatches      atomic.Int64
	spinBatches                    atomic.Int64
	spinsPaid, spinsWasted         atomic.Int64 // spin outcomes (spinwait.Gauge)
	spinsSkipped                   atomic.Int64 // waits that did not spin (spinAdmit)
	// Drains before a silence or a late timer run (drain.go), and the
	// batches they read.
	silenceDrains, lateDrains, drainedBatches atomic.Int64
	readErrors, writeErrors                   atomic.Int64
	noRoute, timerRuns                        atomic.Int64
	dataPolled, acksOnData, acksPolled        atomic.Int64 // EngineStats.DataPolled and so on
	// otherPolled counts the other datagrams polled (probes, HELLOs,
	// CLOSEs): with the two above, every datagram polled (the send
	// sampler's Unwritten).
	otherPolled atomic.Int64
	// Errors read from the sockets' error queues (see peergone.go).
	portUnreachable, errQueueOther atomic.Int64
	peerGone, unreachableIgnored   atomic.Int64
	heldEnds                       atomic.Int64 // EngineStats.HeldEnds
	naps                           atomic.Int64 // EngineStats.Naps
}

// readErrorPause is how long a reader waits after a read error that is not
// the socket's closing, so that a persistent error does not spin.
const readErrorPause = time.Millisecond

func newEngine(core *metaroce.Endpoint, socks []PathSocket, batch, maxDatagram int, arrivalTimes, ackRoom bool) *engine {
	e := &engine{core: core, socks: socks, start: time.Now(), armed: -1, batch: batch, maxDatagram: maxDatagram,
		retireAfter: retireAfter, arrivalTimes: arrivalTimes}
	e.txCond = sync.NewCond(&e.txMu)
	e.wrote.L = &e.mu
	e.cur = make([]atomic.Pointer[sockRef], len(socks))
	for i, s := range socks {
		e.cur[i].Store(&sockRef{s})
	}
	e.txNext, e.txTurn = make([]uint64, len(socks)), make([]uint64, len(socks))
	e.arrived = make([]time.Duration, len(socks))
	e.gatherMin = gatherMinOf(socks)
	if e.gatherMin > 0 {
		e.gatherMin = min(e.gatherMin, fullPayloadMin(maxDatagram, ackRoom))
	}
	for _, s := range socks {
		e.placers = e.placers || canPlace(s, maxDatagram)
	}
	e.timer = time.NewTimer(time.Hour)
	e.timer.Stop()
	e.timerStop = make(chan struct{})
	e.spin = newSpinner(socks, batch)
	return e
}

// sockRef holds a path's current socket.
type sockRef struct{ s PathSocket }

// sock returns path's socket now.
func (e *engine) sock(path int) PathSocket { return e.cur[path].Load().s }

// run starts one reader goroutine per path socket, or the endpoint
// reader (coalesce.go), and the timer's.
func (e *engine) run() {
	e.readers.Add(1)
	go e.timerLoop()
	if e.coalesce > 0 {
		e.readers.Add(1)
		go e.coalesceLoop()
		return
	}
	e.runSocketReaders()
}

// lock enters the engine's critical section.
func (e *engine) lock() { e.mu.Lock() }

// lockAPI enters the critical section for an application call (a send, a
// receive, a cancel, an abort). The calls queue among themselves first, so
// that at most one of them waits on mu at a time: a reader or the timer,
// which bring what the peers sent and answer their probes, then waits
// behind at most one call, not behind all of the application's
// goroutines. Without it, a rank posting thousands of sends at once (500
// of its goroutines waiting on mu, GOMAXPROCS 1, a loaded host) kept its
// readers and timer out for seconds: it answered nothing, and its peers
// named it silent (PeerTimeout) while it was busy.
func (e *engine) lockAPI() {
	e.apiMu.Lock()
	e.mu.Lock()
	e.apiMu.Unlock()
}

// unlock leaves the critical section: it writes the datagrams polled in
// it, outside mu and in their turn, and goes on polling and writing while
// the core has more ready.
func (e *engine) unlock() {
	if e.placers {
		e.placing.Store(e.core.Placing())
	}
	for {
		b := e.pending
		e.pending = nil
		if b == nil || e.closed {
			e.recycle(b)
			e.mu.Unlock()
			return
		}
		for p, ms := range b.byPath {
			if len(ms) > 0 {
				b.tickets[p] = e.txNext[p]
				e.txNext[p]++
			}
		}
		full := b.n == e.batch
		if b.gathered > 0 {
			e.writing = append(e.writing, b)
		}
		e.mu.Unlock()
		e.write(b)
		e.mu.Lock()
		gone := e.writtenRefused(b)
		e.recycle(b)
		if (!full && !gone) || e.closed {
			e.mu.Unlock()
			return
		}
		now := e.now()
		e.poll(now)
		e.rearm(now)
	}
}

// now returns the time since the engine's start, never earlier than a time
// already given to the core. The caller holds mu.
func (e *engine) now() time.Duration { return e.nowAt(time.Now()) }

// nowAt is now for the wall and monotonic time t, read by the caller.
func (e *engine) nowAt(t time.Time) time.Duration {
	d := max(t.Sub(e.start), e.last)
	e.last = d
	return d
}

// readLoop reads path's socket until it closes. A socket that can peek
// (placer) has each large DATA payload read straight into its receive
// buffer while the core has a receive to place into (Placing); everything
// else is read in batches, with no peek: by the socket's own loop where
// it has one (eachReader), which saves a read per wait.
func (e *engine) readLoop(path int, s PathSocket) {
	defer e.readers.Done()
	ms := make([]Message, e.batch)
	for i := range ms {
		// Room for a GRO train, and for a datagram longer than the core
		// accepts (which the core then counts as such).
		ms[i].Buf = make([]byte, ReadBufferSize)
	}
	pr := newPlacedReader(s, e.maxDatagram)
	er, each := s.(eachReader)
	handle := func(n int) bool { return e.handleBatch(path, ms[:n]) }
	for {
		if each && pr == nil {
			err := er.readEach(ms, handle)
			if err == nil || e.readFailed(s, err) {
				return // nil: handle found the engine closed
			}
			continue
		}
		if pr != nil && e.placing.Load() {
			placed, err := e.readPlaced(path, pr)
			if err != nil {
				if e.readFailed(s, err) {
					return
				}
				continue
			}
			if placed {
				continue
			}
		}
		n, err := s.ReadBatch(ms[:pr.batchLen(len(ms), e.placing.Load())])
		if err != nil {
			if e.readFailed(s, err) {
				return
			}
			continue
		}
		if !e.handleBatch(path, ms[:n]) {
			return
		}
	}
}

// readFailed deals with a read error on a path socket s: it reports true if
// the socket is closed or its read deadline passed while takeOver hands
// it to the endpoint reader (the reader ends). Otherwise it reads the socket's
// error queue and tells the core about the peers found gone; an error the
// queue explains (ECONNREFUSED is a port unreachable's) is no failure of
// the socket, any other is counted and pauses the reader.
func (e *engine) readFailed(s PathSocket, err error) bool {
	if errors.Is(err, net.ErrClosed) || e.isClosed() ||
		(e.handingOver.Load() && errors.Is(err, os.ErrDeadlineExceeded)) {
		return true
	}
	refused, read := e.drainErrors(s, nil)
	e.handleRefused(refused)
	if isRefused(err) || read > 0 {
		return false
	}
	e.st.readErrors.Add(1)
	time.Sleep(readErrorPause)
	return false
}

// handleBatch feeds datagrams read from path's socket to the core and
// processes the outcome. It reports false once the engine is closed.
func (e *engine) handleBatch(path int, ms []Message) bool {
	e.lock()
	if e.closed {
		e.mu.Unlock()
		return false
	}
	e.process(e.feed(path, ms))
	e.unlock()
	return true
}

// feed hands datagrams read from path's socket to the core, at the time
// it returns, without processing the outcome: the caller processes it,
// once for all the batches it fed (readSlots). The caller holds mu.
func (e *engine) feed(path int, ms []Message) time.Duration {
	e.st.readBatches.Add(1)
	read := time.Now()
	now := e.nowAt(read)
	e.noteSources(now, ms)
	var bytes, count int64
	for _, m := range ms {
		at := e.arrival(path, now, read, m.Received)
		b := m.Buf[:min(max(m.N, 0), len(m.Buf))]
		bytes += int64(len(b))
		seg := m.Segment // a GRO train holds datagrams of seg bytes
		if seg <= 0 || seg > len(b) {
			seg = len(b)
		}
		for {
			e.core.HandleDatagramAt(now, at, path, m.CE, b[:seg])
			if mayRefuse(b[:seg]) {
				e.answerRefusals(path, m.Addr)
			}
			count++
			// The stamp is the train's first segment's: the rest arrived
			// later, when is not known, so they count as arriving now
			// (an RTT sample too long, never one below the path's delay).
			at = now
			b = b[seg:]
			if len(b) == 0 {
				break
			}
			seg = min(seg, len(b))
		}
	}
	e.st.datagramsRead.Add(count)
	e.st.bytesRead.Add(bytes)
	return now
}

func (e *engine) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// timerLoop runs onTimer each time the timer fires, until stop.
func (e *engine) timerLoop() {
	defer e.readers.Done()
	for {
		select {
		case <-e.timer.C:
			e.onTimer()
		case <-e.timerStop:
			return
		}
	}
}

// onTimer runs the core's timers, each time the timer fires. A timer
// that would fail a connection for its peer's silence, or that runs late,
// first reads what the sockets hold (drainBeforeTimers).
func (e *engine) onTimer() {
	e.drainBeforeTimers()
	e.lock()
	defer e.unlock()
	if e.closed {
		return
	}
	e.armed = -1
	e.st.timerRuns.Add(1)
	now := e.now()
	e.core.HandleTimeout(now)
	e.noteStall(now)
	e.process(now)
}

// process is what follows every input to the core: it hands the core's
// events to the handler (which may post more work), polls a batch of the
// datagrams the core has ready (unlock writes them and polls the rest),
// and re-arms the timer. The caller holds mu.
func (e *engine) process(now time.Duration) {
	e.afterInput(now)
	for {
		handled := false
		for {
			ev, ok := e.core.PollEvent()
			if !ok {
				break
			}
			handled = true
			e.handle(now, ev)
		}
		e.poll(now)
		if !handled {
			break
		}
	}
	e.rearm(now)
}

// rearm sets the timer for the core's next deadline where that differs
// from the one it is set for: earlier, and later too, when the deadline
// it was set for has gone (a paced datagram or a held ACK that a reader
// sent first). A timer left at the gone deadline would fire for nothing:
// in the two-site lab half the timer's runs did (1,700 of 3,400 per
// 16 MiB hierarchical AllReduce, 8 ranks), each a goroutine wake-up and
// a pass through the core, where moving it costs a timer reset under mu.
// A timer that fires early all the same finds nothing due and re-arms.
// The caller holds mu.
func (e *engine) rearm(now time.Duration) {
	t, ok := e.core.NextTimeout()
	if !ok || e.closed {
		return
	}
	if e.armed == t {
		return
	}
	e.armed = t
	d := max(t-now, 0)
	if g := time.Duration(timerGranularity.Load()); d > 0 && d < g {
		d = g
	}
	e.timer.Reset(d)
}

// timerGranularity, set by tests only, is the least wait (ns) of a timer
// set for later than now (0: none). It emulates Go's netpoll on Linux,
// which rounds an idle process's timer waits under 1 ms up to 1 ms
// (TestWANSimHierarchical's WAN_SIM_TIMER_US).
var timerGranularity atomic.Int64

// stop closes every socket, stops the timer and waits for the readers and
// the timer's goroutine to end. The caller must not hold mu, nor be one
// of them.
func (e *engine) stop() {
	e.mu.Lock()
	already := e.closed
	e.closed = true
	e.timer.Stop()
	e.mu.Unlock()
	if !already {
		close(e.timerStop)
		for i := range e.cur {
			_ = e.sock(i).Close()
		}
		// Closed outside mu: a Close waits for its socket's reader to
		// leave handleBatch (eachReader), which may wait for mu.
		e.mu.Lock()
		retiring := e.retiring
		e.retiring = nil
		e.mu.Unlock()
		for _, r := range retiring {
			_ = r.s.Close()
		}
		if e.spin != nil {
			e.spin.mu.Lock() // no waiter reads any more
			_ = e.spin.poller.Close()
			e.spin.mu.Unlock()
		}
	}
	e.readers.Wait()
}
