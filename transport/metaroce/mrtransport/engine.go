package mrtransport

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
)

// engine drives one MetaRoCE core over real sockets and the real clock. It
// is the only part of MetaRoCE with goroutines: one reader per path socket,
// and a timer callback. Everything that touches the core runs under mu:
// a reader feeds its whole batch of datagrams to the core under one lock,
// then drains the core's events and transmits before unlocking, so a
// datagram's answer (an ACK, the next window of DATA) leaves from the
// reader's goroutine without a hand-off to another goroutine. API calls
// (Send, Recv, Cancel, Abort) do the same from the caller's goroutine.
// A single engine goroutine fed by channels was the alternative; it adds a
// goroutine wake-up (a few microseconds) to every datagram and every call,
// which is most of an 8-byte message's latency on loopback.
type engine struct {
	mu    sync.Mutex
	core  *metaroce.Endpoint
	socks []PathSocket
	start time.Time
	last  time.Duration // latest time fed to the core; never goes back

	// route maps a transmit's (peer node id, path) to the peer socket's
	// address; handle receives every core event; afterInput runs first
	// in every process. All run under mu.
	route      func(peer uint64, path int) (netip.AddrPort, bool)
	handle     func(now time.Duration, ev metaroce.Event)
	afterInput func(now time.Duration)

	timer *time.Timer
	armed time.Duration // deadline the timer is set for; -1: stopped
	tx    txBatch

	closed  bool
	readers sync.WaitGroup
	st      engineCounters
}

// engineCounters are the engine's own counters, readable without mu.
type engineCounters struct {
	datagramsRead, bytesRead       atomic.Int64
	datagramsWritten, bytesWritten atomic.Int64
	readBatches, writeBatches      atomic.Int64
	readErrors, writeErrors        atomic.Int64
	noRoute, timerRuns             atomic.Int64
}

// txBatch is the scratch of a flush: up to batch datagram buffers, and the
// messages grouped by path socket. It is used under mu only.
type txBatch struct {
	bufs   [][]byte
	byPath [][]Message
}

// readErrorPause is how long a reader waits after a read error that is not
// the socket's closing, so that a persistent error does not spin.
const readErrorPause = time.Millisecond

func newEngine(core *metaroce.Endpoint, socks []PathSocket, batch, maxDatagram int) *engine {
	e := &engine{core: core, socks: socks, start: time.Now(), armed: -1}
	e.tx.bufs = make([][]byte, batch)
	for i := range e.tx.bufs {
		e.tx.bufs[i] = make([]byte, maxDatagram)
	}
	e.tx.byPath = make([][]Message, len(socks))
	e.timer = time.AfterFunc(time.Hour, e.onTimer)
	e.timer.Stop()
	return e
}

// run starts one reader goroutine per path socket, reading batches of up
// to batch datagrams of up to maxDatagram bytes.
func (e *engine) run(batch, maxDatagram int) {
	for i, s := range e.socks {
		e.readers.Add(1)
		go e.readLoop(i, s, batch, maxDatagram)
	}
}

// now returns the time since the engine's start, never earlier than a time
// already given to the core. The caller holds mu.
func (e *engine) now() time.Duration {
	t := max(time.Since(e.start), e.last)
	e.last = t
	return t
}

func (e *engine) readLoop(path int, s PathSocket, batch, maxDatagram int) {
	defer e.readers.Done()
	ms := make([]Message, batch)
	for i := range ms {
		// One byte more than the core accepts, so that an oversized
		// datagram reaches the core whole enough to be counted as such.
		ms[i].Buf = make([]byte, maxDatagram+1)
	}
	for {
		n, err := s.ReadBatch(ms)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || e.isClosed() {
				return
			}
			e.st.readErrors.Add(1)
			time.Sleep(readErrorPause)
			continue
		}
		e.st.readBatches.Add(1)
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return
		}
		now := e.now()
		var bytes int64
		for _, m := range ms[:n] {
			bytes += int64(m.N)
			e.core.HandleDatagram(now, path, m.CE, m.Buf[:m.N])
		}
		e.st.datagramsRead.Add(int64(n))
		e.st.bytesRead.Add(bytes)
		e.process(now)
		e.mu.Unlock()
	}
}

func (e *engine) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// onTimer runs the core's timers. It is the timer's callback.
func (e *engine) onTimer() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.armed = -1
	e.st.timerRuns.Add(1)
	now := e.now()
	e.core.HandleTimeout(now)
	e.process(now)
}

// process is what follows every input to the core: it hands the core's
// events to the handler (which may post more work), sends every datagram
// the core has ready, and re-arms the timer. The caller holds mu.
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
		if !e.flush(now) && !handled {
			break
		}
	}
	e.rearm(now)
}

// flush sends every datagram the core has ready, in batches, and reports
// whether there was any. The caller holds mu.
func (e *engine) flush(now time.Duration) bool {
	any := false
	for {
		n := 0
		for n < len(e.tx.bufs) {
			tx, ok := e.core.PollTransmit(now, e.tx.bufs[n])
			if !ok {
				break
			}
			any = true
			addr, ok := e.route(tx.Peer, tx.Path)
			if !ok || tx.Path < 0 || tx.Path >= len(e.socks) {
				e.st.noRoute.Add(1)
				continue
			}
			e.tx.byPath[tx.Path] = append(e.tx.byPath[tx.Path], Message{Buf: e.tx.bufs[n], N: tx.N, Addr: addr})
			n++
		}
		e.write()
		if n < len(e.tx.bufs) {
			return any
		}
	}
}

// write sends the grouped datagrams, one batch per path socket. A datagram
// the socket refuses is dropped and counted: the core resends what is lost.
func (e *engine) write() {
	for path, ms := range e.tx.byPath {
		for len(ms) > 0 {
			n, err := e.socks[path].WriteBatch(ms)
			e.st.writeBatches.Add(1)
			for _, m := range ms[:n] {
				e.st.bytesWritten.Add(int64(m.N))
			}
			e.st.datagramsWritten.Add(int64(n))
			if err != nil {
				e.st.writeErrors.Add(1)
				n++ // skip the datagram the error concerns
			}
			ms = ms[min(n, len(ms)):]
		}
		clear(e.tx.byPath[path])
		e.tx.byPath[path] = e.tx.byPath[path][:0]
	}
}

// rearm sets the timer for the core's next deadline if that is earlier
// than the one it is set for. A timer that fires early finds nothing due
// and re-arms for the later deadline. The caller holds mu.
func (e *engine) rearm(now time.Duration) {
	t, ok := e.core.NextTimeout()
	if !ok || e.closed {
		return
	}
	if e.armed >= 0 && e.armed <= t {
		return
	}
	e.armed = t
	e.timer.Reset(max(t-now, 0))
}

// stop closes every socket, stops the timer and waits for the readers to
// end. The caller must not hold mu.
func (e *engine) stop() {
	e.mu.Lock()
	already := e.closed
	e.closed = true
	e.timer.Stop()
	e.mu.Unlock()
	if already {
		e.readers.Wait()
		return
	}
	for _, s := range e.socks {
		_ = s.Close()
	}
	e.readers.Wait()
}
