package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// Default values of the ClientConfig fields.
const (
	DefaultClientMaxFrameBytes = 4 << 20
	DefaultRetryMin            = 10 * time.Millisecond
	DefaultRetryMax            = time.Second
	DefaultCancelGrace         = time.Second
)

// ClientConfig configures a Client. JobKey is required; a zero or negative
// field other than JobKey takes its default.
type ClientConfig struct {
	// JobKey is the job's secret, which the client proves, and checks that
	// the server holds, at connection, and which keys every frame's tag.
	JobKey jobkey.Key
	// MaxFrameBytes bounds a response frame; it should be at least the
	// server's Config.MaxFrameBytes. A larger response closes the
	// connection. Default 4 MiB.
	MaxFrameBytes int
	// RetryMin and RetryMax bound the pause between Dial's attempts, which
	// doubles from RetryMin up to RetryMax. Defaults 10 ms and 1 s.
	RetryMin, RetryMax time.Duration
	// CancelGrace is how long a Get or Wait whose context ended waits for
	// the server to say which keys are still missing; past it, the error
	// names all the keys asked for. Default 1 s.
	CancelGrace time.Duration

	untagged bool // benchmarks only: frames carry no tag (the server's must agree)
}

func (c ClientConfig) withDefaults() (ClientConfig, error) {
	if c.MaxFrameBytes <= 0 {
		c.MaxFrameBytes = DefaultClientMaxFrameBytes
	}
	if c.RetryMin <= 0 {
		c.RetryMin = DefaultRetryMin
	}
	if c.RetryMax <= 0 {
		c.RetryMax = DefaultRetryMax
	}
	if c.CancelGrace <= 0 {
		c.CancelGrace = DefaultCancelGrace
	}
	if c.JobKey.IsZero() {
		return c, fmt.Errorf("%w: ClientConfig.JobKey is not set", ErrInvalid)
	}
	return c, nil
}

// Client is a Store served by a Server over one TCP connection. It is safe
// for concurrent use: concurrent calls share the connection, each waiting
// for its own response. A Client does not reconnect: once its connection is
// lost, every call fails with an error wrapping ErrClosed.
type Client struct {
	cfg       ClientConfig
	conn      net.Conn
	sendLimit int // the server's MaxFrameBytes, learnt in the handshake
	nextID    atomic.Uint64
	in        *sealer // checks the server's frames; used by readLoop only

	wmu sync.Mutex // serializes writes
	out *sealer    // tags the requests; guarded by wmu

	mu    sync.Mutex
	calls map[uint64]chan response // pending requests by id
	err   error                    // why the connection ended; nil while it is up
	done  chan struct{}            // closed when the reading goroutine exits
}

var _ Store = (*Client)(nil)

// Dial connects to the server at addr (host:port), retrying until the server
// accepts or ctx ends, since ranks may start before the server (or a flood
// of connections may close this one in its handshake). It then runs the
// handshake, in which each side proves that it holds the job key without
// sending it, so that a wrong key fails Dial with an error wrapping
// ErrBadJobKey rather than being retried.
func Dial(ctx context.Context, addr string, cfg ClientConfig) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	pause := cfg.RetryMin
	for {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			var c *Client
			if c, err = start(ctx, conn, cfg); !errors.Is(err, errLost) || ctx.Err() != nil {
				return c, err
			}
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("store: dial %s: %w (last attempt: %v)", addr, ctx.Err(), err)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("store: dial %s: %w (last attempt: %v)", addr, ctx.Err(), err)
		case <-t.C:
		}
		pause = min(2*pause, cfg.RetryMax)
	}
}

// start runs the handshake on conn, then a client on it.
func start(ctx context.Context, conn net.Conn, cfg ClientConfig) (*Client, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(DefaultHandshakeTimeout)
	}
	br := bufio.NewReaderSize(conn, readBufferBytes)
	sess, maxFrame, err := clientHandshake(conn, br, cfg.JobKey, deadline)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("store: handshake with %s: %w", conn.RemoteAddr(), err)
	}
	c := &Client{
		cfg:       cfg,
		conn:      conn,
		sendLimit: min(maxFrame, cfg.MaxFrameBytes),
		in:        newSealer(sess.s2c),
		out:       newSealer(sess.c2s),
		calls:     make(map[uint64]chan response),
		done:      make(chan struct{}),
	}
	c.in.untagged, c.out.untagged = cfg.untagged, cfg.untagged
	go c.readLoop(br)
	return c, nil
}

// Close closes the connection; pending and later calls fail with ErrClosed.
func (c *Client) Close() error {
	c.fail(fmt.Errorf("%w: client closed", ErrClosed))
	<-c.done
	return nil
}

// fail records why the connection ended, if it is the first reason, and
// closes it.
func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	_ = c.conn.Close()
}

// lostErr returns why the connection ended.
func (c *Client) lostErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// readLoop delivers each response to the call waiting for it.
func (c *Client) readLoop(br *bufio.Reader) {
	defer close(c.done)
	for {
		body, err := readFrame(br, c.cfg.MaxFrameBytes+tagBytes)
		if err != nil {
			c.fail(fmt.Errorf("%w: connection to the store lost: %w", ErrClosed, err))
			return
		}
		if body, err = c.in.open(body); err != nil {
			c.fail(fmt.Errorf("store: a response from %s: %w", c.conn.RemoteAddr(), err))
			return
		}
		resp, err := parseResponse(body)
		if err != nil {
			c.fail(err)
			return
		}
		if resp.id == 0 {
			c.fail(responseError(resp, nil))
			return
		}
		c.mu.Lock()
		ch := c.calls[resp.id]
		delete(c.calls, resp.id)
		c.mu.Unlock()
		if ch != nil {
			ch <- resp // buffered; never blocks
		}
	}
}

// call sends req and returns the server's response, or an error if the
// connection ends or ctx does. For a get or wait (waitKeys not nil) whose
// ctx ends, it asks the server to end the wait and returns the server's
// answer, which names the keys still missing. A non-OK response is
// returned as an error.
func (c *Client) call(ctx context.Context, req *request, waitKeys []string) (response, error) {
	if err := ctx.Err(); err != nil {
		if waitKeys != nil {
			return response{}, &MissingKeysError{Keys: waitKeys, Err: err}
		}
		return response{}, err
	}
	req.id = c.nextID.Add(1)
	if dl, ok := ctx.Deadline(); ok && waitKeys != nil {
		req.timeoutMs = timeoutMillis(time.Until(dl))
	}
	frame, err := appendRequest(nil, req)
	if err != nil {
		return response{}, err
	}
	if len(frame)-frameLenBytes > c.sendLimit {
		return response{}, fmt.Errorf("%w: request of %d bytes exceeds the server's MaxFrameBytes %d",
			ErrLimit, len(frame)-frameLenBytes, c.sendLimit)
	}
	ch := make(chan response, 1)
	if err := c.register(req.id, ch); err != nil {
		return response{}, err
	}
	if err := c.write(ctx, frame); err != nil {
		c.unregister(req.id)
		return response{}, err
	}
	select {
	case resp := <-ch:
		return resp, checkStatus(ctx, resp)
	case <-c.done:
		return c.lastResponse(ctx, req.id, ch)
	case <-ctx.Done():
	}
	if waitKeys == nil {
		c.unregister(req.id)
		return response{}, ctx.Err()
	}
	return c.cancelWait(ctx, req.id, ch, waitKeys)
}

// cancelWait asks the server to end the wait with request id, whose ctx has
// ended, and returns its answer (which may be a success, if the keys arrived
// meanwhile) or, failing one within CancelGrace, names all the keys.
func (c *Client) cancelWait(ctx context.Context, id uint64, ch chan response, keys []string) (response, error) {
	grace, cancel := context.WithTimeout(context.Background(), c.cfg.CancelGrace)
	defer cancel()
	frame, _ := appendRequest(nil, &request{op: opCancel, id: id})
	if err := c.write(grace, frame); err == nil {
		select {
		case resp := <-ch:
			return resp, checkStatus(ctx, resp)
		case <-c.done:
			return c.lastResponse(ctx, id, ch)
		case <-grace.Done():
		}
	}
	c.unregister(id)
	return response{}, &MissingKeysError{Keys: keys, Err: ctx.Err()}
}

// lastResponse returns the response to request id if it arrived before the
// connection ended (the reading goroutine delivers it before it exits), or
// else why the connection ended.
func (c *Client) lastResponse(ctx context.Context, id uint64, ch chan response) (response, error) {
	select {
	case resp := <-ch:
		return resp, checkStatus(ctx, resp)
	default:
		c.unregister(id)
		return response{}, c.lostErr()
	}
}

// checkStatus returns the error a response carries. The keys of a missing
// response are attributed to ctx's error, or to a deadline if the server's
// copy of the timeout ran out first.
func checkStatus(ctx context.Context, resp response) error {
	if resp.status == statusOK {
		return nil
	}
	cause := ctx.Err()
	if cause == nil {
		cause = context.DeadlineExceeded
	}
	return responseError(resp, cause)
}

// timeoutMillis converts a remaining time to the wire's milliseconds,
// rounding up and never to 0 (which means no timeout).
func timeoutMillis(d time.Duration) uint32 {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	return uint32(min(max(ms, 1), math.MaxUint32))
}

func (c *Client) register(id uint64, ch chan response) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	c.calls[id] = ch
	return nil
}

func (c *Client) unregister(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.calls, id)
}

// write sends one frame, giving up at ctx's deadline (a cancellation of ctx
// does not interrupt it; it only blocks while the server is not reading). A
// failed write may leave part of a frame on the wire, so it ends the
// connection.
func (c *Client) write(ctx context.Context, frame []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	frame, err := c.out.sealFrame(frame, 0)
	if err != nil {
		return err
	}
	dl, _ := ctx.Deadline()
	_ = c.conn.SetWriteDeadline(dl)
	if _, err := c.conn.Write(frame); err != nil {
		if lost := c.lostErr(); lost != nil {
			return lost
		}
		err = fmt.Errorf("%w: writing to the store: %w", ErrClosed, err)
		c.fail(err)
		return err
	}
	return nil
}
