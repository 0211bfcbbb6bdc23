package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// Default values of the Config fields.
const (
	DefaultMaxConns             = 1024
	DefaultMaxHandshakes        = 128
	DefaultMaxHandshakesPerHost = 32
	DefaultMaxFrameBytes        = 4 << 20
	DefaultWriteTimeout         = 10 * time.Second
	DefaultHandshakeTimeout     = 10 * time.Second
	DefaultFrameTimeout         = 30 * time.Second
)

// frameOverheadBytes is what a frame needs besides its keys and values:
// headers, the job key and item lengths.
const frameOverheadBytes = 4096

// Config configures a Server. JobKey is required; a zero or negative field
// other than JobKey takes its default.
type Config struct {
	// JobKey is the job's secret (required). Every connection must prove
	// it in its handshake; one that does not is refused with ErrBadJobKey
	// and counted (ServerStats.RefusedKey).
	JobKey jobkey.Key
	// Limits bound the store's memory (see Limits for the defaults).
	Limits Limits
	// MaxConns is the number of authenticated client connections served
	// at once. A connection beyond it is sent an ErrLimit error after its
	// handshake and closed. Default 1024.
	MaxConns int
	// MaxHandshakes bounds the connections still in their handshake, and
	// MaxHandshakesPerHost those from one IP address. A new connection
	// beyond a bound closes the oldest in its handshake, of its own host
	// if that host has MaxHandshakesPerHost (ServerStats.Evicted): a flood
	// of connections from one host cannot close another host's, and only
	// delays its own host's ranks (Dial tries again). Defaults 128 and 32
	// (at most MaxHandshakes).
	MaxHandshakes, MaxHandshakesPerHost int
	// HandshakeTimeout bounds a connection's handshake, and FrameTimeout
	// the reading of one frame once its first byte has come (an idle
	// authenticated connection may wait for ever). Defaults 10 s and 30 s.
	HandshakeTimeout, FrameTimeout time.Duration

	untagged bool // benchmarks only: frames carry no tag (the clients' must agree)
	// MaxFrameBytes bounds a request frame, and so the number of keys one
	// Wait may name. It must be at least 2*MaxValueBytes + MaxKeyBytes +
	// 4096, so that a compare-and-set of the largest value fits. A larger
	// frame is refused with ErrLimit and its connection closed. The server
	// buffers one frame per connection, and only for a connection past its
	// handshake (before it, a frame is at most 49 bytes). Default 4 MiB.
	MaxFrameBytes int
	// WriteTimeout bounds the writing of one response; a client that does
	// not read its responses for that long is disconnected. Default 10 s.
	WriteTimeout time.Duration
}

// withDefaults fills in defaults and checks the configuration.
func (c Config) withDefaults() (Config, error) {
	c.Limits = c.Limits.withDefaults()
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.MaxFrameBytes <= 0 {
		c.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.MaxHandshakes <= 0 {
		c.MaxHandshakes = DefaultMaxHandshakes
	}
	if c.MaxHandshakesPerHost <= 0 {
		c.MaxHandshakesPerHost = DefaultMaxHandshakesPerHost
	}
	c.MaxHandshakesPerHost = min(c.MaxHandshakesPerHost, c.MaxHandshakes)
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.FrameTimeout <= 0 {
		c.FrameTimeout = DefaultFrameTimeout
	}
	if c.JobKey.IsZero() {
		return c, fmt.Errorf("%w: Config.JobKey is not set", ErrInvalid)
	}
	need := 2*int64(c.Limits.MaxValueBytes) + int64(c.Limits.MaxKeyBytes) + frameOverheadBytes
	if int64(c.MaxFrameBytes) < need || c.MaxFrameBytes > 1<<31-1 {
		return c, fmt.Errorf("%w: Config.MaxFrameBytes %d, want %d to 2^31-1 for these Limits",
			ErrInvalid, c.MaxFrameBytes, need)
	}
	return c, nil
}

// Server serves one job's store over TCP. Create it with Listen or Serve;
// stop it with Close. All methods are safe for concurrent use.
type Server struct {
	cfg       Config
	tab       *table
	ln        net.Listener
	stopAfter func() bool // stops the context.AfterFunc that closes s; guarded by mu
	stats     serverCounters

	wg        sync.WaitGroup // the accept loop and connection goroutines
	mu        sync.Mutex
	conns     map[*serverConn]struct{} // every connection, in its handshake or not
	pending   []*serverConn            // those in their handshake, oldest first
	authed    int                      // those past it
	closed    bool
	closeOnce sync.Once
}

// Listen listens on the TCP address addr (such as "127.0.0.1:0") and serves
// the store there, as Serve does.
func Listen(ctx context.Context, addr string, cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("store: listen: %w", err)
	}
	s, err := Serve(ctx, ln, cfg)
	if err != nil {
		_ = ln.Close()
	}
	return s, err
}

// Serve serves the store on ln in background goroutines and returns at once.
// The server owns ln from then on. It runs until Close is called or ctx ends,
// whichever comes first.
func Serve(ctx context.Context, ln net.Listener, cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:   cfg,
		tab:   newTable(cfg.Limits),
		ln:    ln,
		conns: make(map[*serverConn]struct{}),
	}
	s.wg.Go(s.acceptLoop)
	stop := context.AfterFunc(ctx, func() { _ = s.Close() })
	s.mu.Lock()
	s.stopAfter = stop // nil in Close if ctx had already ended
	s.mu.Unlock()
	return s, nil
}

// Addr returns the address the server listens on, to be passed to Dial.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Local returns a Store that works on the server's data directly, without
// TCP or job key, for the process that runs the server. Closing it does
// nothing; its calls fail with ErrClosed once the server is closed.
func (s *Server) Local() Store { return &MemStore{t: s.tab, borrowed: true} }

// DeletePrefix deletes every key that starts with prefix and returns how
// many it deleted: the keys of something finished (a restarted job's
// previous round), so that a long-lived store does not grow with it. A
// wait on a deleted key goes on waiting for it to be set again.
func (s *Server) DeletePrefix(prefix string) int { return s.tab.delPrefix(prefix) }

// Close stops the server: it stops accepting, ends the pending waits with
// ErrClosed, closes every connection and returns once all of the server's
// goroutines have exited. Closing twice is a no-op.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		stopAfter := s.stopAfter
		conns := make([]*serverConn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()
		_ = s.ln.Close()
		s.tab.close()
		for _, c := range conns {
			c.stop()
		}
		s.wg.Wait()
		if stopAfter != nil {
			stopAfter()
		}
	})
	return nil
}

// acceptLoop accepts connections until the listener is closed. Other accept
// errors (such as running out of file descriptors) are retried with backoff.
func (s *Server) acceptLoop() {
	backoff := 5 * time.Millisecond
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if s.isClosed() || errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		s.admit(conn)
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// admit starts serving conn (its handshake first), closing the oldest
// connection still in its handshake, of the same host if it has
// MaxHandshakesPerHost, if MaxHandshakes are.
func (s *Server) admit(conn net.Conn) {
	s.stats.accepted.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = conn.Close()
		return
	}
	host := remoteHost(conn)
	oldest, mine := -1, 0
	for i, p := range s.pending {
		if p.host == host {
			if mine++; oldest < 0 {
				oldest = i
			}
		}
	}
	switch {
	case mine >= s.cfg.MaxHandshakesPerHost:
		s.evict(oldest)
	case len(s.pending) >= s.cfg.MaxHandshakes:
		s.evict(0)
	}
	c := newServerConn(s, conn)
	c.host = host
	s.conns[c] = struct{}{}
	s.pending = append(s.pending, c)
	s.wg.Go(c.serve)
}

// errMaxConns is the ErrLimit of a connection refused at MaxConns.
var errMaxConns = fmt.Errorf("%w: server full", ErrLimit)

// evict closes the connection pending[i] in its handshake.
func (s *Server) evict(i int) {
	old := s.pending[i]
	s.pending = append(s.pending[:i], s.pending[i+1:]...)
	old.evicted.Store(true)
	s.stats.evicted.Add(1)
	old.stop()
}

// remoteHost is the IP address conn comes from.
func remoteHost(conn net.Conn) string {
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return conn.RemoteAddr().String()
}

// promote moves c past its handshake, unless MaxConns connections are.
func (s *Server) promote(c *serverConn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.unpend(c) {
		return fmt.Errorf("%w: connection closed during its handshake", ErrClosed)
	}
	if s.authed >= s.cfg.MaxConns {
		s.stats.overLimit.Add(1)
		return fmt.Errorf("%w: it has MaxConns %d connections", errMaxConns, s.cfg.MaxConns)
	}
	s.authed++
	c.authed = true
	return nil
}

// unpend removes c from the handshakes, reporting whether it was there.
func (s *Server) unpend(c *serverConn) bool {
	for i, p := range s.pending {
		if p == c {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			return true
		}
	}
	return false
}

// lingerTimeout bounds how long closeGracefully drains a connection.
const lingerTimeout = 500 * time.Millisecond

// closeGracefully closes conn after its last response: it shuts down the
// sending side, then discards what the peer still sends until the peer
// closes or lingerTimeout passes. Closing at once with unread input would
// make the kernel reset the connection, and the peer could lose the
// response that explains why it was closed.
func closeGracefully(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		_ = tc.SetReadDeadline(time.Now().Add(lingerTimeout))
		_, _ = io.Copy(io.Discard, io.LimitReader(tc, 1<<20))
	}
	_ = conn.Close()
}

func (s *Server) removeConn(c *serverConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	if c.authed {
		s.authed--
	} else {
		s.unpend(c)
	}
}
