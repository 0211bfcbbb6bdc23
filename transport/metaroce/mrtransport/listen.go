package mrtransport

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/gocoll/gocoll/transport/metaroce"
)

// PeerAddr is what a rank publishes so that others can reach it: the
// address of each of its path sockets, by path index.
type PeerAddr struct {
	Paths []netip.AddrPort
}

// String formats a as its path addresses separated by commas, such as
// "127.0.0.1:40001,127.0.0.1:40002"; [ParsePeerAddr] reads it back.
func (a PeerAddr) String() string {
	parts := make([]string, len(a.Paths))
	for i, p := range a.Paths {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

// ParsePeerAddr parses the form PeerAddr.String writes: 1 to
// metaroce.MaxPaths addresses with ports, separated by commas.
func ParsePeerAddr(s string) (PeerAddr, error) {
	if s == "" {
		return PeerAddr{}, errors.New("mrtransport: empty peer address")
	}
	if n := strings.Count(s, ",") + 1; n > metaroce.MaxPaths {
		return PeerAddr{}, fmt.Errorf("mrtransport: peer address with %d paths, at most %d", n, metaroce.MaxPaths)
	}
	var a PeerAddr
	for part := range strings.SplitSeq(s, ",") {
		ap, err := netip.ParseAddrPort(part)
		if err != nil {
			return PeerAddr{}, fmt.Errorf("mrtransport: peer address: %w", err)
		}
		a.Paths = append(a.Paths, ap)
	}
	return a, nil
}

// Listener holds one rank's open path sockets, already reading, until
// [Listener.Connect] builds the rank's connections from them.
type Listener struct {
	ep   *Endpoint
	addr PeerAddr

	mu   sync.Mutex
	used bool // Connect returned the endpoint, which now owns the sockets
}

// Listen checks cfg, fills in its defaults and opens the path sockets,
// bound to cfg.ListenAddr. The caller publishes [Listener.Addr] to the
// other ranks and calls Connect. ctx bounds the set-up only.
func Listen(ctx context.Context, cfg Config) (*Listener, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	binds, err := resolveBinds(cfg)
	if err != nil {
		return nil, err
	}
	socks, addr, err := openPaths(cfg, binds)
	if err != nil {
		return nil, err
	}
	if cfg.autoDatagram {
		cfg.MaxDatagram = listenDatagram(binds, is6(cfg.ListenAddr.Addr()))
		cfg.Core.MaxDatagram = cfg.MaxDatagram
	}
	core, err := metaroce.NewEndpoint(cfg.Core)
	if err != nil {
		closeSockets(socks)
		return nil, fmt.Errorf("mrtransport: %w", err)
	}
	eng := newEngine(core, socks, cfg.Batch, cfg.MaxDatagram, cfg.ArrivalTimes, cfg.Core.AckRoom)
	eng.controlClass = uint8(cfg.ControlDSCP)
	eng.setCoalesce(cfg.CoalesceWait)
	ep := newEndpoint(cfg, eng)
	ep.binds = binds
	eng.run()
	ep.startSampler()
	if repickOn(cfg) {
		ep.startRepick()
	}
	return &Listener{ep: ep, addr: addr}, nil
}

// openPaths opens the path sockets at binds: ListenAddr's port (plus the
// path index) or a port of PortRange.
func openPaths(cfg Config, binds []pathBind) ([]PathSocket, PeerAddr, error) {
	socks := make([]PathSocket, 0, cfg.Paths)
	var addr PeerAddr
	taken := make(map[uint16]bool)
	for i := range cfg.Paths {
		var s PathSocket
		var err error
		if cfg.PortRange.IsZero() {
			port := cfg.ListenAddr.Port()
			if port != 0 {
				port += uint16(i)
			}
			s, err = cfg.OpenSocket(i, netip.AddrPortFrom(binds[i].addr, port))
		} else {
			s, err = openInRange(cfg.OpenSocket, i, binds[i].addr, cfg.PortRange, taken)
		}
		if err != nil {
			closeSockets(socks)
			return nil, PeerAddr{}, fmt.Errorf("mrtransport: path %d: %w", i, err)
		}
		socks = append(socks, s)
		taken[s.LocalAddr().Port()] = true
		addr.Paths = append(addr.Paths, s.LocalAddr())
	}
	return socks, addr, nil
}

func closeSockets(socks []PathSocket) {
	for _, s := range socks {
		_ = s.Close()
	}
}

// Addr returns the addresses to publish to the other ranks.
func (l *Listener) Addr() PeerAddr { return l.addr }

// Close releases the sockets unless Connect has returned the endpoint
// (which then owns them). It is idempotent.
func (l *Listener) Close() error {
	l.mu.Lock()
	used := l.used
	l.mu.Unlock()
	if used {
		return nil
	}
	return l.ep.Close()
}

// Connect connects this rank to every other: peers[i] is rank i's
// published address (peers[Config.Rank] is not used). Lower ranks dial
// higher ones through the core's HELLO handshake, retrying until ctx ends;
// Connect returns when every connection is established, or with an error
// naming the ranks still missing when ctx ends. After an error the
// listener may be closed or Connect called again.
func (l *Listener) Connect(ctx context.Context, peers []PeerAddr) (*Endpoint, error) {
	e := l.ep
	if len(peers) != e.cfg.Size {
		return nil, fmt.Errorf("mrtransport: %d peer addresses for a world of %d", len(peers), e.cfg.Size)
	}
	for r, a := range peers {
		if r != e.cfg.Rank && (len(a.Paths) == 0 || len(a.Paths) > metaroce.MaxPaths) {
			return nil, fmt.Errorf("mrtransport: rank %d's address has %d paths", r, len(a.Paths))
		}
	}
	limits := e.datagramLimits(peers)
	e.autoCoalesce()
	e.eng.lock()
	if e.closed {
		e.eng.unlock()
		return nil, fmtClosed()
	}
	now := e.eng.now()
	for r, p := range e.peers {
		if p == nil {
			continue
		}
		p.addrs = append([]netip.AddrPort(nil), peers[r].Paths...)
		p.maxDatagram = limits[r]
		if r > e.cfg.Rank && p.conn == 0 && !p.excluded {
			e.dial(now, p)
		}
	}
	e.eng.process(now)
	e.eng.unlock()

	select {
	case <-e.connected:
		l.mu.Lock()
		l.used = true
		l.mu.Unlock()
		return e, nil
	case <-e.closing:
		return nil, fmtClosed()
	case <-e.refused:
		e.eng.lock()
		err := e.authErr
		e.eng.unlock()
		return nil, err
	case <-ctx.Done():
		return nil, fmt.Errorf("mrtransport: rank %d: ranks %v not connected: %w", e.cfg.Rank, e.missing(), ctx.Err())
	}
}

// datagramLimits returns, by rank, the datagram limit of the connections
// this endpoint dials (to higher ranks): the route's (peerDatagram) where
// MaxDatagram is sized from the MTU and the route's is smaller, else 0
// (none). It makes a few system calls per peer address and none while
// holding eng.mu.
func (e *Endpoint) datagramLimits(peers []PeerAddr) []int {
	limits := make([]int, len(peers))
	if !e.cfg.autoDatagram || e.binds == nil {
		return limits
	}
	cache := make(map[routeKey]int)
	for r := e.cfg.Rank + 1; r < len(peers); r++ {
		if d, ok := peerDatagram(e.binds, peers[r].Paths, cache); ok && d < e.cfg.MaxDatagram {
			limits[r] = d
		}
	}
	return limits
}

func fmtClosed() error { return errors.New("mrtransport: listener closed") }

// missing returns the ranks whose connection is not up.
func (e *Endpoint) missing() []int {
	e.eng.lock()
	defer e.eng.unlock()
	var out []int
	for r, p := range e.peers {
		if p != nil && !p.up && !p.excluded {
			out = append(out, r)
		}
	}
	return out
}

// NewLocalWorld builds n connected endpoints on this host, rank i at index
// i, each configured by cfg except for Rank and Size. Leave
// cfg.ListenAddr's port 0: n ranks cannot share fixed ports. It is meant
// for tests and for several ranks in one process; the caller closes every
// endpoint.
func NewLocalWorld(ctx context.Context, n int, cfg Config) ([]*Endpoint, error) {
	if n < 1 || n > MaxSize {
		return nil, fmt.Errorf("mrtransport: local world of %d ranks (want 1 to %d)", n, MaxSize)
	}
	listeners := make([]*Listener, 0, n)
	addrs := make([]PeerAddr, n)
	closeAll := func() {
		for _, l := range listeners {
			_ = l.ep.Close()
		}
	}
	for i := range n {
		c := cfg
		c.Rank, c.Size = i, n
		l, err := Listen(ctx, c)
		if err != nil {
			closeAll()
			return nil, err
		}
		listeners = append(listeners, l)
		addrs[i] = l.Addr()
	}
	eps := make([]*Endpoint, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, l := range listeners {
		wg.Go(func() { eps[i], errs[i] = l.Connect(ctx, addrs) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeAll()
		return nil, err
	}
	return eps, nil
}
