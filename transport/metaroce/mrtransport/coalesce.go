package mrtransport

import (
	"cmp"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

// The endpoint reader (Config.CoalesceWait). With a reader goroutine per
// path socket, each parked in the runtime's poller, a WAN's paced datagrams
// (200 Mbit/s paths space them ~360 us apart, ~90 us on 4 paths) each find
// the process asleep and wake it: ~8.5 CPU-us a datagram of epoll, Go
// scheduler and interrupt (bench/results/cpu_lab/cpu26.md), a third of a
// WAN datagram's cost. A reader that naps after a read does not help while
// the sockets stay in the runtime's poller: any arrival on any of them
// wakes the process anyway. So with CoalesceWait the sockets are unpolled
// (udpio.Config.Unpolled) and one goroutine, coalesceLoop, reads them all
// through the spinner's Poller: it parks (Poller.Wait) until any socket
// has something, reads every ready socket, and, while what it reads comes
// from far peers only, sleeps CoalesceWait before reading again: the
// datagrams that arrive meanwhile wake nobody. It naps only while the far
// peers' bytes come densely enough for a nap to gather a few datagrams
// (farStream): naps held every small message's next read (and a near
// peer's reply during it) for up to CoalesceWait, which in the two-site
// lab cost an 8-byte AllReduce 7-20 % and a 64 KiB one 10-35 %
// (bench/results/session28/). A near peer's datagram (a
// LAN's, whose round trip is shorter than coalesceRTTFactor naps) ends
// the naps, so a LAN's ACKs are not held.
const (
	// coalesceRTTFactor: a peer is far, and its datagrams may wait for a
	// nap, when its connection's lowest RTT is at least this many
	// CoalesceWaits: a nap then holds an ACK for at most a quarter of the
	// round trip the windows are sized from.
	coalesceRTTFactor = 4
	// farRefresh is how often (engine time) the far peers are worked out
	// again from the core's RTT samples.
	farRefresh = 20 * time.Millisecond
	// coalescePark bounds one Wait of the endpoint reader (it waits again).
	coalescePark = time.Second
	// farStreamNaps is the window, in CoalesceWaits, over which the reader
	// weighs far peers' bytes, and farStreamBatch the datagrams (of the
	// engine's largest size) a nap must expect to gather on average for the
	// reader to nap at all: a nap that gathers fewer saves little CPU and
	// only delays what arrives during it. A stream of small messages (an
	// 8-byte or 64 KiB AllReduce's steps across the two-site lab) stays
	// below it and is read at once; a bulk transfer (16 MiB, ~25 MB/s a
	// rank there: ~2.8 datagrams a nap) is above it.
	farStreamNaps  = 8
	farStreamBatch = 2
)

// farState is what the endpoint reader knows of the peers: addr maps a
// peer socket's address to whether the peer is far, as of at (engine
// time), from of (Endpoint.farPeers); heardNear is set when a read heard
// a near peer. All but heardNear are guarded by the engine's mu.
type farState struct {
	addr      map[netip.AddrPort]bool
	at        time.Duration
	of        func(minRTT time.Duration, far map[netip.AddrPort]bool)
	anyFar    bool // some address in addr is far
	heardNear atomic.Bool
	// bytes counts the bytes read from far peers (noteSources), for the
	// reader's farStream.
	bytes atomic.Int64
}

// farStream is the endpoint reader's judgement of whether far peers are
// sending a stream dense enough for naps to pay: from each window of
// farStreamNaps CoalesceWaits to the next, the far bytes read in the
// last whole window, against farStreamBatch datagrams of the engine's
// largest size a nap.
type farStream struct {
	start time.Time // the current window's
	mark  int64     // farState.bytes at start
	dense bool      // the last whole window was dense
}

// note updates s at now from the far bytes read so far (total), for naps
// of wait and datagrams of up to size bytes, and reports whether the
// reader should nap.
func (s *farStream) note(now time.Time, total int64, wait time.Duration, size int) bool {
	window := farStreamNaps * wait
	if el := now.Sub(s.start); el >= window {
		need := int64(farStreamNaps * farStreamBatch * max(size, 1))
		s.dense = el < 2*window && total-s.mark >= need
		s.start, s.mark = now, total
	}
	return s.dense
}

// coalesced reports whether c's default sockets are opened unpolled for
// the endpoint reader: CoalesceWait is on and datagrams are not read into
// place (placeMinDatagram; an MTU-sized MaxDatagram counts as below it,
// and where it is not, placement is given up: setCoalesce).
func (c *Config) coalesced() bool {
	return c.CoalesceWait > 0 && (c.autoDatagram || c.MaxDatagram < placeMinDatagram)
}

// setCoalesce turns the endpoint reader on, with naps of wait, if every
// path socket is an unpolled udpio socket that the spinner's Poller can
// wait for; otherwise each socket keeps its own reader (an unpolled
// socket's then waits in poll(2) slices: slower, still correct). Called
// before run.
func (e *engine) setCoalesce(wait time.Duration) {
	if wait <= 0 || e.spin == nil {
		return
	}
	for _, s := range e.socks {
		if u, ok := s.(*udpioSocket); !ok || !u.s.Unpolled() {
			return
		}
	}
	e.coalesce = wait
	e.placers = false // nobody peeks: the endpoint reader reads whole batches
	e.far.addr = make(map[netip.AddrPort]bool)
}

// autoCoalesce applies the default of Config.CoalesceWait (left 0) at the
// first Connect: the endpoint reader takes over the path sockets, with
// naps of DefaultCoalesceWait, where the process runs with one processor
// (runtime.GOMAXPROCS; the launcher fits it to the host's ranks after
// Listen, before Connect) and datagrams are MTU-sized (MaxDatagram below
// placeMinDatagram: not read into place), on Linux. Measured (session
// 28, bench/results/cpu_lab/coal28.md): with one processor it costs less
// CPU per WAN datagram and loses no LAN goodput; with two, one reader
// where per-socket readers read in parallel cut a LAN's goodput 2-4x
// (coal27.md).
func (ep *Endpoint) autoCoalesce() {
	ep.autoOnce.Do(func() {
		if ep.cfg.CoalesceWait == 0 && ep.cfg.MaxDatagram < placeMinDatagram &&
			runtime.GOOS == "linux" && runtime.GOMAXPROCS(0) == 1 && ep.eng.takeOver(DefaultCoalesceWait) {
			ep.log.Info("mrtransport: endpoint reader on (GOMAXPROCS 1)", "nap", DefaultCoalesceWait)
		}
	})
}

// runSocketReaders starts a reader for each path socket.
func (e *engine) runSocketReaders() {
	for i, s := range e.socks {
		e.readers.Add(1)
		e.sockReaders.Add(1)
		go func() {
			defer e.sockReaders.Done()
			e.readLoop(i, s)
		}()
	}
}

// takeOver hands the path sockets from their readers (runSocketReaders)
// to the endpoint reader, with naps of wait, and reports whether it did.
// The readers end at a read deadline set now (handingOver); then, holding
// the spinner's lock and mu, with no write in progress (writesDone), the
// sockets leave the runtime's poller (udpio.Socket.Unpoll), the spinner's
// Poller is made anew over them and the endpoint reader starts. Where
// that cannot be (a socket that is not a udpio one, no spinner, a failed
// call) the socket readers start again. It must run before a re-pick
// (which moves sockets: the first Connect) and not under mu.
func (e *engine) takeOver(wait time.Duration) bool {
	if e.spin == nil || e.coalesce > 0 {
		return false
	}
	us := make([]*udpio.Socket, len(e.socks))
	for i, s := range e.socks {
		u, ok := s.(*udpioSocket)
		if !ok {
			return false
		}
		us[i] = u.s
	}
	e.handingOver.Store(true)
	for _, u := range us {
		_ = u.SetReadDeadline(time.Now())
	}
	e.sockReaders.Wait()
	sp := e.spin
	sp.mu.Lock()
	defer sp.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.handingOver.Store(false)
	if e.closed {
		return false
	}
	e.writesDone()
	var err error
	for _, u := range us {
		err = cmp.Or(err, u.Unpoll(), u.SetReadDeadline(time.Time{}))
	}
	if err == nil {
		var p *udpio.Poller
		if p, err = udpio.NewPoller(us); err == nil {
			_ = sp.poller.Close()
			sp.poller = p
			e.setCoalesce(wait)
		}
	}
	if e.coalesce == 0 {
		e.runSocketReaders()
		return false
	}
	e.readers.Add(1)
	go e.coalesceLoop()
	return true
}

// writesDone waits until every batch polled has been written (each
// path's turn has come to its next ticket). The caller holds mu, so no
// batch is polled meanwhile.
func (e *engine) writesDone() {
	e.txMu.Lock()
	defer e.txMu.Unlock()
	for !slices.Equal(e.txTurn, e.txNext) {
		e.txCond.Wait()
	}
}

// coalesceLoop is the endpoint reader: it reads every ready path socket
// (readReady, under the spinner's lock, as a spinning waiter would), then
// reads again at once if some socket filled a batch, after a nap of
// e.coalesce if only far peers were heard and their stream is dense
// (farStream), and otherwise parks in the Poller, until the engine stops.
func (e *engine) coalesceLoop() {
	defer e.readers.Done()
	sp := e.spin
	ms := make([]Message, e.batch)
	for i := range ms {
		ms[i].Buf = make([]byte, ReadBufferSize)
	}
	rd := make([]udpio.Message, e.batch)
	var readyBuf []int
	var stream farStream
	for {
		e.far.heardNear.Store(false)
		// The spinner's lock only to copy its sockets: a spinning waiter
		// reads and handles other sockets while this reader handles its
		// batches (and writes what they answer).
		sp.mu.Lock()
		poller, slots := sp.poller, sp.slots
		sp.mu.Unlock()
		n, ready, _, full := e.readSlots(poller, slots, &readyBuf, rd, ms)
		dense := stream.note(time.Now(), e.far.bytes.Load(), e.coalesce, e.maxDatagram)
		switch {
		case full: // more may wait: read again at once
		case n > 0 && !e.far.heardNear.Load() && dense:
			e.st.naps.Add(1)
			time.Sleep(e.coalesce)
		case n == 0 && ready: // only errors, which readReady has read
			time.Sleep(readErrorPause)
		default:
			// Nothing was ready, or a near peer's datagrams were read:
			// wait for more. (Wait re-arms first: what arrived since the
			// read ends it at once, without a read that finds nothing.)
			if err := sp.poller.Wait(coalescePark); err != nil && !errors.Is(err, net.ErrClosed) {
				e.st.readErrors.Add(1)
				time.Sleep(readErrorPause)
			}
		}
		if e.isClosed() {
			return
		}
	}
}

// noteSources marks, for the endpoint reader, whether ms came from a near
// peer (heardNear) and counts the bytes that came from far ones (bytes),
// refreshing the far peers every farRefresh. The caller holds mu.
func (e *engine) noteSources(now time.Duration, ms []Message) {
	if e.coalesce == 0 {
		return
	}
	f := &e.far
	if f.of != nil && (f.at == 0 || now-f.at >= farRefresh) {
		f.at = max(now, 1)
		f.of(coalesceRTTFactor*e.coalesce, f.addr)
		f.anyFar = false
		for _, isFar := range f.addr {
			f.anyFar = f.anyFar || isFar
		}
	}
	if !f.anyFar { // every datagram is a near peer's: no lookup each
		if len(ms) > 0 && !f.heardNear.Load() {
			f.heardNear.Store(true)
		}
		return
	}
	var far int64
	for _, m := range ms {
		if f.addr[unmapped(m.Addr)] {
			far += int64(m.N)
		} else if !f.heardNear.Load() {
			f.heardNear.Store(true)
		}
	}
	f.bytes.Add(far)
}

// farPeers sets far to say, for every path socket address of a connected
// peer, whether the peer is far: its connection's lowest RTT over the
// paths sampled (the fabric's where the core has it:
// metaroce.Endpoint.ConnMinRTT) is at least minRTT. A peer with no sample
// yet is near. The caller holds eng.mu.
func (e *Endpoint) farPeers(minRTT time.Duration, far map[netip.AddrPort]bool) {
	clear(far)
	for _, p := range e.peers {
		if p == nil || p.conn == 0 {
			continue
		}
		low, ok := e.eng.core.ConnMinRTT(p.conn)
		isFar := ok && low >= minRTT
		for _, a := range p.addrs {
			far[unmapped(a)] = isFar
		}
	}
}
