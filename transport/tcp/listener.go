package tcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// Listener is a bound listening socket waiting to build one rank's mesh of
// connections with [Listener.Connect]. It is used once: Connect closes it.
type Listener struct {
	cfg Config
	ln  net.Listener
}

// Listen checks cfg, fills in its defaults, and binds cfg.ListenAddr. The
// caller shares [Listener.Addr] with the other ranks (through its launcher)
// and then calls Connect.
func Listen(ctx context.Context, cfg Config) (*Listener, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	lc.SetMultipathTCP(cfg.MultipathTCP)
	ln, err := lc.Listen(ctx, "tcp", cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("tcp: listen: %w", err)
	}
	return &Listener{cfg: cfg, ln: ln}, nil
}

// Addr returns the address the listener is bound to, such as
// "127.0.0.1:40123".
func (l *Listener) Addr() string { return l.ln.Addr().String() }

// Close closes the listening socket. Connect calls it; calling it again is
// harmless.
func (l *Listener) Close() error {
	err := l.ln.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// link is one established, handshaken connection.
type link struct {
	peer, index int
	nc          net.Conn
	credit      int64      // eager credit the peer granted us
	auth        *frameAuth // the frames' keys; nil without Config.Key
}

// Connect builds the full mesh of this rank (Config.Rank) with every rank
// in addrs, where addrs[i] is rank i's listen address (addrs[Config.Rank]
// is not dialed). Each rank dials the ranks above it and accepts the ranks
// below it, Config.ConnsPerPeer connections per pair, retrying refused
// dials until ctx ends. Every connection starts with a handshake naming the
// job, world size and ranks, and one that does not fit is refused with an
// error wrapping [ErrRefused]: on the dialing side Connect fails with it;
// on the accepting side the stray connection is closed and, if the mesh is
// not complete when ctx ends, the error names it. Connect closes the
// listener before it returns.
func (l *Listener) Connect(ctx context.Context, addrs []string) (*Endpoint, error) {
	defer l.Close()
	cfg, size := l.cfg, len(addrs)
	if size < 1 || size > MaxWorldSize || cfg.Rank >= size {
		return nil, fmt.Errorf("tcp: rank %d in a world of %d addresses (want 1 to %d ranks)", cfg.Rank, size, MaxWorldSize)
	}
	grant := cfg.UnexpectedBytesMax / int64(max(1, size-1))
	m := &mesher{cfg: cfg, size: size, grant: grant, addrs: addrs,
		links: make(chan link), errs: make(chan error, 1)}
	if !cfg.Key.IsZero() {
		m.hk = handshakeKey(cfg.Key)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); m.acceptLoop(ctx, l.ln) }()
	for peer := cfg.Rank + 1; peer < size; peer++ {
		for index := range cfg.ConnsPerPeer {
			wg.Add(1)
			go func() { defer wg.Done(); m.dial(ctx, peer, index) }()
		}
	}
	links, err := m.collect(ctx)
	cancel()
	_ = l.Close() // ends acceptLoop
	wg.Wait()
	m.drain()
	if err != nil {
		for _, lk := range links {
			_ = lk.nc.Close()
		}
		return nil, fmt.Errorf("tcp: rank %d: connect: %w", cfg.Rank, err)
	}
	e := newEndpoint(cfg, size, grant)
	m.mu.Lock()
	e.authDropped.Add(m.refused) // handshakes refused for the key while connecting
	m.mu.Unlock()
	for _, lk := range links {
		p := e.peers[lk.peer]
		if p.conns == nil {
			p.conns = make([]*conn, cfg.ConnsPerPeer)
		}
		p.conns[lk.index] = newConn(e, p, lk.index, lk.nc)
		p.conns[lk.index].auth = lk.auth
		if lk.index == 0 {
			p.credit, p.peerGrant = lk.credit, lk.credit
		}
	}
	e.start()
	return e, nil
}
