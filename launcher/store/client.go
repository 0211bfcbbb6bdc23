package store

import (
	"bufio"
	"context"
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
	// JobKey is the job's secret, which the server checks on every request.
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
	sendLimit int // the server's MaxFrameBytes, learnt from hello
	nextID    atomic.Uint64

	wmu sync.Mutex // serializes writes

	mu    sync.Mutex
	calls map[uint64]chan response // pending requests by id
	err   error                    // why the connection ended; nil while it is up
	done  chan struct{}            // closed when the reading goroutine exits
}

var _ Store = (*Client)(nil)

// Dial connects to the server at addr (host:port), retrying until the server
// accepts or ctx ends, since ranks may start before the server. It then
// checks the job key with the server, so that a wrong key fails Dial with an
// error wrapping ErrBadJobKey rather than being retried.
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
			return start(ctx, conn, cfg)
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

// start runs a client on conn and greets the server.
func start(ctx context.Context, conn net.Conn, cfg ClientConfig) (*Client, error) {
	c := &Client{
		cfg:       cfg,
		conn:      conn,
		sendLimit: cfg.MaxFrameBytes,
		calls:     make(map[uint64]chan response),
		done:      make(chan struct{}),
	}
	go c.readLoop()
	resp, err := c.call(ctx, &request{op: opHello}, nil)
	if err == nil {
		var r result
		if r, err = decodeResult(opHello, resp.items); err == nil {
			c.sendLimit = int(min(uint64(r.maxFrame), uint64(cfg.MaxFrameBytes)))
			return c, nil
		}
	}
	_ = c.Close()
	return nil, fmt.Errorf("store: greeting %s: %w", conn.RemoteAddr(), err)
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
func (c *Client) readLoop() {
	defer close(c.done)
	br := bufio.NewReaderSize(c.conn, readBufferBytes)
	for {
		body, err := readFrame(br, c.cfg.MaxFrameBytes)
		if err != nil {
			c.fail(fmt.Errorf("%w: connection to the store lost: %w", ErrClosed, err))
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
	req.id, req.jobKey = c.nextID.Add(1), []byte(c.cfg.JobKey.Reveal())
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
	frame, _ := appendRequest(nil, &request{op: opCancel, id: id, jobKey: []byte(c.cfg.JobKey.Reveal())})
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
