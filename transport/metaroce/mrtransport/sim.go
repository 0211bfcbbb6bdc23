package mrtransport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// SimConfig configures a [SimNet].
type SimConfig struct {
	// Size is the number of ranks, 1 to MaxSize.
	Size int
	// Fabric configures the simulated fabric; its Seed seeds every random
	// choice of the links (loss, duplication, corruption, jitter,
	// reordering).
	Fabric simfabric.Config
	// Link configures every directed link: one per (from socket, to
	// socket) pair, made when the first datagram takes it. Link may
	// override it per pair; nil means Link for all.
	Link  simfabric.LinkConfig
	Links func(from, fromPath, to, toPath int) simfabric.LinkConfig
	// ECMP, if not nil, replaces Link and Links: see SimECMP.
	ECMP *SimECMP
	// QueueDatagrams bounds each socket's queue of datagrams delivered and
	// not yet read (the socket's receive buffer); beyond it arrivals are
	// dropped and counted. Default 4096, at most 1<<20.
	QueueDatagrams int
	// Tap, if not nil, sees every datagram a socket writes, as it enters
	// the fabric (before any link's queue may drop it): the sending and
	// receiving ranks and the datagram, which Tap must not keep or
	// change. It runs with the SimNet's lock held, so it must not call
	// the SimNet. A diagnostic: tests count the bytes each kind of
	// datagram puts on a link.
	Tap func(from, to int, b []byte)
}

// SimNet puts a [simfabric.Fabric] in place of the UDP network: every rank
// is a fabric node, and each pair of path sockets that exchanges datagrams
// gets a link of its own in each direction. Sockets from [SimNet.Opener]
// hand written datagrams to the fabric at the current time; a driver
// goroutine advances the fabric to the clock and puts arriving datagrams in
// the receiving socket's queue.
//
// The fabric's time is time.Since the SimNet's creation. Outside a
// testing/synctest bubble that is real time (so link delays are real
// delays, rounded up by the Go timer to about a millisecond); inside one it
// is the bubble's virtual clock, which jumps ahead whenever every
// goroutine is blocked, so delays, timeouts and idle periods cost no real
// time. The fabric's random draws follow its seed, but which datagram
// enters a link first depends on how the goroutines of the endpoints are
// scheduled, so a run is not bit-for-bit repeatable: the faults are drawn
// from the same streams, and land on whichever datagrams come.
type SimNet struct {
	cfg   SimConfig
	start time.Time
	wake  chan struct{} // a datagram entered the fabric
	done  chan struct{} // closed by Close
	ended sync.WaitGroup

	mu      sync.Mutex
	fab     *simfabric.Fabric
	socks   map[netip.AddrPort]*simSocket
	paths   map[[2]netip.AddrPort]simfabric.PathID
	dest    []*simSocket     // destination socket, by fabric path
	src     []netip.AddrPort // source address, by fabric path
	dropped int64            // arrivals dropped at a full socket queue
	closed  bool
	ecmp    ecmpState
}

// NewSimNet returns a simulated network for cfg.Size ranks, with its driver
// goroutine running. Close stops it.
func NewSimNet(cfg SimConfig) (*SimNet, error) {
	if cfg.Size < 1 || cfg.Size > MaxSize {
		return nil, fmt.Errorf("mrtransport: simulated network of %d ranks", cfg.Size)
	}
	if cfg.QueueDatagrams == 0 {
		cfg.QueueDatagrams = 4096
	}
	if cfg.QueueDatagrams < 1 || cfg.QueueDatagrams > 1<<20 {
		return nil, fmt.Errorf("mrtransport: QueueDatagrams=%d not in [1, %d]", cfg.QueueDatagrams, 1<<20)
	}
	if err := cfg.ECMP.check(); err != nil {
		return nil, err
	}
	fab, err := simfabric.New(cfg.Fabric)
	if err != nil {
		return nil, err
	}
	for range cfg.Size {
		if _, err := fab.AddNode(); err != nil {
			return nil, err
		}
	}
	n := &SimNet{cfg: cfg, start: time.Now(), wake: make(chan struct{}, 1), done: make(chan struct{}),
		fab: fab, socks: make(map[netip.AddrPort]*simSocket), paths: make(map[[2]netip.AddrPort]simfabric.PathID)}
	n.ended.Add(1)
	go n.drive()
	return n, nil
}

// simAddr is the address of rank's socket of path index path.
func simAddr(rank, path int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(rank >> 16), byte(rank >> 8), byte(rank)}), uint16(4000+path))
}

// Opener returns the SocketOpener of rank's path sockets (Config.OpenSocket).
func (n *SimNet) Opener(rank int) SocketOpener {
	return func(path int, _ netip.AddrPort) (PathSocket, error) {
		if rank < 0 || rank >= n.cfg.Size {
			return nil, fmt.Errorf("mrtransport: rank %d outside the simulated network", rank)
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		a := simAddr(rank, path)
		if n.cfg.ECMP != nil {
			a = n.ecmp.freshAddr(rank, path)
		}
		if n.closed || n.socks[a] != nil {
			return nil, fmt.Errorf("mrtransport: simulated socket %v: closed or in use", a)
		}
		s := &simSocket{net: n, rank: rank, path: path, addr: a,
			queue: make(chan simDatagram, n.cfg.QueueDatagrams), closed: make(chan struct{})}
		n.socks[a] = s
		return s, nil
	}
}

// Stats returns the fabric's counters.
func (n *SimNet) Stats() simfabric.FabricStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.fab.Stats()
}

// QueueDrops returns the datagrams dropped because a socket's queue was
// full.
func (n *SimNet) QueueDrops() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.dropped
}

// Close stops the driver goroutine. Close the endpoints first.
func (n *SimNet) Close() {
	n.mu.Lock()
	if !n.closed {
		n.closed = true
		close(n.done)
	}
	n.mu.Unlock()
	n.ended.Wait()
}

// now returns the fabric time for the clock now; the caller holds mu.
func (n *SimNet) now() time.Duration { return max(time.Since(n.start), n.fab.Now()) }

// drive advances the fabric to the clock, delivering what arrives, then
// sleeps until the fabric's next event or a new datagram.
func (n *SimNet) drive() {
	defer n.ended.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		n.mu.Lock()
		_ = n.fab.AdvanceTo(n.now(), n.deliver)
		next, ok := n.fab.NextEventTime()
		wait := time.Hour
		if ok {
			wait = max(next-time.Since(n.start), 0)
		}
		n.mu.Unlock()
		timer.Reset(wait)
		select {
		case <-n.done:
			return
		case <-n.wake:
		case <-timer.C:
		}
	}
}

// deliver puts an arriving datagram in its socket's queue, or drops it if
// the queue is full or the socket closed. The caller holds mu.
func (n *SimNet) deliver(d simfabric.Delivery) {
	s := n.dest[d.Path]
	select {
	case <-s.closed:
	case s.queue <- simDatagram{data: d.Data, ce: d.CE, from: n.src[d.Path]}:
	default:
		n.dropped++
	}
}

// send injects a datagram of DSCP class from socket s to address to. The
// caller holds mu.
func (n *SimNet) send(s *simSocket, to netip.AddrPort, b []byte, class uint8) error {
	dst := n.socks[to]
	if dst == nil {
		return nil // nobody there: the datagram is lost, as UDP's would be
	}
	if n.cfg.Tap != nil {
		n.cfg.Tap(s.rank, dst.rank, b)
	}
	if c := n.cfg.ECMP; c != nil && (len(b) <= c.Bypass || (class != 0 && class == c.Priority)) {
		p, err := n.bypassPath(s, dst)
		if err != nil {
			return err
		}
		return n.fab.Send(p, b)
	}
	key := [2]netip.AddrPort{s.addr, to}
	p, ok := n.paths[key]
	if !ok && n.cfg.ECMP != nil {
		var err error
		if p, err = n.ecmpPath(s, dst); err != nil {
			return err
		}
		n.paths[key] = p
		n.dest = append(n.dest, dst)
		n.src = append(n.src, s.addr)
	}
	if !ok && n.cfg.ECMP == nil {
		cfg := n.cfg.Link
		if n.cfg.Links != nil {
			cfg = n.cfg.Links(s.rank, s.path, dst.rank, dst.path)
		}
		var err error
		p, _, err = n.fab.Connect(simfabric.NodeID(s.rank), simfabric.NodeID(dst.rank), cfg)
		if err != nil {
			return err
		}
		n.paths[key] = p
		n.dest = append(n.dest, dst) // fabric paths are numbered in order
		n.src = append(n.src, s.addr)
	}
	return n.fab.Send(p, b)
}

// simDatagram is a datagram delivered to a socket's queue.
type simDatagram struct {
	data []byte
	ce   bool
	from netip.AddrPort
}

// simSocket is a PathSocket on a SimNet.
type simSocket struct {
	net        *SimNet
	rank, path int
	addr       netip.AddrPort
	queue      chan simDatagram
	closed     chan struct{}
	closeOnce  sync.Once
}

func (s *simSocket) LocalAddr() netip.AddrPort { return s.addr }

func (s *simSocket) ReadBatch(ms []Message) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	select {
	case <-s.closed:
		return 0, net.ErrClosed
	case d := <-s.queue:
		s.put(&ms[0], d)
	}
	n := 1
	for n < len(ms) {
		select {
		case d := <-s.queue:
			s.put(&ms[n], d)
			n++
		default:
			return n, nil
		}
	}
	return n, nil
}

func (s *simSocket) put(m *Message, d simDatagram) {
	m.N = copy(m.Buf, d.data)
	m.CE, m.Addr, m.Segment = d.ce, d.from, 0
}

func (s *simSocket) WriteBatch(ms []Message) (int, error) {
	n := s.net
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return 0, net.ErrClosed
	}
	_ = n.fab.AdvanceTo(n.now(), n.deliver)
	for i, m := range ms {
		if err := n.send(s, m.Addr, m.Buf[:m.N], m.Class); err != nil {
			n.mu.Unlock()
			return i, err
		}
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
	return len(ms), nil
}

func (s *simSocket) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return nil
}

// NewSimWorld builds n connected endpoints over a new SimNet made from sim
// (its Size set to n), each configured by cfg except for Rank, Size and
// OpenSocket. The caller closes every endpoint and then the SimNet.
func NewSimWorld(ctx context.Context, n int, cfg Config, sim SimConfig) ([]*Endpoint, *SimNet, error) {
	sim.Size = n
	net, err := NewSimNet(sim)
	if err != nil {
		return nil, nil, err
	}
	listeners := make([]*Listener, 0, n)
	addrs := make([]PeerAddr, n)
	fail := func(err error) ([]*Endpoint, *SimNet, error) {
		for _, l := range listeners {
			_ = l.ep.Close()
		}
		net.Close()
		return nil, nil, err
	}
	for r := range n {
		c := cfg
		c.Rank, c.Size, c.OpenSocket = r, n, net.Opener(r)
		l, err := Listen(ctx, c)
		if err != nil {
			return fail(err)
		}
		listeners = append(listeners, l)
		addrs[r] = l.Addr()
	}
	eps := make([]*Endpoint, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, l := range listeners {
		wg.Go(func() { eps[r], errs[r] = l.Connect(ctx, addrs) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fail(err)
	}
	return eps, net, nil
}
