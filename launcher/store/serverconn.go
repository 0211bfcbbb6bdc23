package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// readBufferBytes is the size of each connection's read buffer.
const readBufferBytes = 32 << 10

// serverConn serves one client connection: a goroutine reads and answers
// requests in order, and each get or wait that has to block gets a goroutine
// that sleeps until the store wakes it (bounded by MaxPendingWaits).
type serverConn struct {
	srv     *Server
	conn    net.Conn
	ctx     context.Context // ends when the connection does
	cancel  context.CancelFunc
	host    string      // the client's IP address
	authed  bool        // past the handshake; guarded by srv.mu
	evicted atomic.Bool // closed by admit to make room (MaxHandshakes)
	in      *sealer     // checks the client's frames; used by serve only

	wmu  sync.Mutex // serializes writes
	wbuf []byte     // guarded by wmu
	out  *sealer    // tags the responses; guarded by wmu; nil before the handshake

	mu    sync.Mutex
	waits map[uint64]context.CancelFunc // blocked gets and waits by request id
	wg    sync.WaitGroup                // their goroutines
}

func newServerConn(s *Server, conn net.Conn) *serverConn {
	ctx, cancel := context.WithCancel(context.Background())
	return &serverConn{srv: s, conn: conn, ctx: ctx, cancel: cancel, waits: make(map[uint64]context.CancelFunc)}
}

// stop makes serve return by closing the connection.
func (c *serverConn) stop() { _ = c.conn.Close() }

// serve runs the handshake, then reads and handles requests until the
// connection ends or a request breaks the protocol.
func (c *serverConn) serve() {
	graceful := false
	defer func() {
		c.cancel()
		c.wg.Wait()
		c.srv.removeConn(c)
		if graceful {
			closeGracefully(c.conn)
		} else {
			_ = c.conn.Close()
		}
	}()
	br := bufio.NewReaderSize(c.conn, readBufferBytes)
	if !c.handshake(br) {
		return
	}
	for {
		req, err := c.readRequest(br)
		if err != nil {
			c.count(err)
			graceful = c.replyFatal(req.id, err)
			return
		}
		c.handle(&req)
	}
}

// handshake runs the server's side of the handshake and welcomes the
// client, or answers why not (untagged: there is no session yet) and
// reports false.
func (c *serverConn) handshake(br *bufio.Reader) bool {
	srv := c.srv
	sess, err := serverHandshake(c.conn, br, srv.cfg.JobKey, time.Now().Add(srv.cfg.HandshakeTimeout))
	if err == nil {
		err = srv.promote(c)
	}
	if err != nil {
		if c.evicted.Load() {
			return false
		}
		c.count(err)
		if isProtocolError(err) {
			frame, _ := appendResponse(nil, errorResponse(0, err))
			_ = c.conn.SetWriteDeadline(time.Now().Add(srv.cfg.WriteTimeout))
			_, _ = c.conn.Write(frame)
		}
		return false
	}
	srv.stats.authenticated.Add(1)
	c.in = newSealer(sess.c2s)
	c.in.untagged = srv.cfg.untagged
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.out = newSealer(sess.s2c)
	c.out.untagged = srv.cfg.untagged
	_ = c.conn.SetDeadline(time.Time{})
	if _, err := c.conn.Write(appendWelcome(nil, sess, srv.cfg.MaxFrameBytes)); err != nil {
		return false
	}
	return true
}

// count adds the error that ends a connection to the server's counters.
func (c *serverConn) count(err error) {
	st := &c.srv.stats
	var ne net.Error
	switch {
	case errors.Is(err, ErrBadJobKey):
		st.refusedKey.Add(1)
	case errors.Is(err, errBadTag):
		st.badTags.Add(1)
	case errors.Is(err, ErrProtocol), errors.Is(err, ErrLimit) && !errors.Is(err, errMaxConns):
		st.badFrames.Add(1)
	case errors.As(err, &ne) && ne.Timeout():
		st.timedOut.Add(1)
	}
}

// readRequest reads the next request: it may wait for ever for the frame
// to start, then FrameTimeout for the rest of it. On error, the request's
// id is set if it is known.
func (c *serverConn) readRequest(br *bufio.Reader) (request, error) {
	if _, err := br.Peek(1); err != nil {
		return request{}, err
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(c.srv.cfg.FrameTimeout))
	body, err := readFrame(br, c.srv.cfg.MaxFrameBytes+tagBytes)
	if err != nil {
		return request{}, err
	}
	_ = c.conn.SetReadDeadline(time.Time{})
	if body, err = c.in.open(body); err != nil {
		return request{}, err
	}
	return parseRequest(body)
}

// replyFatal answers an error after which the connection is closed. Read
// errors of a connection the client closed are not answered. It reports
// whether a response was sent.
func (c *serverConn) replyFatal(id uint64, err error) bool {
	if !isProtocolError(err) {
		return false
	}
	c.send(errorResponse(id, err))
	return true
}

// handle executes one authorized request and answers it, except for cancel
// (no answer) and blocked waits (answered by their goroutine).
func (c *serverConn) handle(req *request) {
	args, err := decodeArgs(req.op, req.items)
	if err != nil {
		c.send(errorResponse(req.id, err))
		return
	}
	tab := c.srv.tab
	var items [][]byte
	switch req.op {
	case opHello:
		items = [][]byte{encodeUint32(uint32(c.srv.cfg.MaxFrameBytes))}
	case opSet:
		err = tab.set(args.key, args.value)
	case opGet:
		c.startWait(req, []string{args.key})
		return
	case opWait:
		c.startWait(req, args.keys)
		return
	case opTryGet:
		v, ok, e := tab.tryGet(args.key)
		items, err = [][]byte{encodeBool(ok), v}, e
	case opAdd:
		n, e := tab.add(args.key, args.delta)
		items, err = [][]byte{encodeInt64(n)}, e
	case opCAS:
		cur, swapped, e := tab.compareAndSet(args.key, args.expected, args.desired)
		items, err = [][]byte{encodeBool(swapped), encodeBool(cur != nil), cur}, e
	case opDelete:
		ok, e := tab.del(args.key)
		items, err = [][]byte{encodeBool(ok)}, e
	case opCancel:
		c.cancelWait(req.id)
		return
	}
	if err != nil {
		c.send(errorResponse(req.id, err))
		return
	}
	c.send(&response{status: statusOK, id: req.id, items: items})
}

// startWait answers a get or wait at once if its keys exist, and otherwise
// leaves it to a goroutine that blocks until they do, the request's timeout
// passes, the client cancels it or the connection ends.
func (c *serverConn) startWait(req *request, keys []string) {
	c.mu.Lock()
	_, dup := c.waits[req.id]
	c.mu.Unlock()
	if dup {
		c.send(errorResponse(req.id, fmt.Errorf("%w: request id %d is already pending", ErrProtocol, req.id)))
		return
	}
	w, ready, err := c.srv.tab.begin(keys)
	if err != nil || ready {
		c.send(waitResponse(req, w, err))
		return
	}
	var ctx context.Context
	var cancel context.CancelFunc
	if req.timeoutMs > 0 {
		ctx, cancel = context.WithTimeout(c.ctx, time.Duration(req.timeoutMs)*time.Millisecond)
	} else {
		ctx, cancel = context.WithCancel(c.ctx)
	}
	c.mu.Lock()
	c.waits[req.id] = cancel
	c.mu.Unlock()
	c.wg.Go(func() {
		err := c.srv.tab.finish(ctx, w)
		c.mu.Lock()
		delete(c.waits, req.id)
		c.mu.Unlock()
		cancel()
		if c.ctx.Err() == nil {
			c.send(waitResponse(req, w, err))
		}
	})
}

// waitResponse is the answer to a get or wait that ended with err.
func waitResponse(req *request, w *waiter, err error) *response {
	if err != nil {
		return errorResponse(req.id, err)
	}
	if req.op == opGet {
		return &response{status: statusOK, id: req.id, items: [][]byte{w.value}}
	}
	return &response{status: statusOK, id: req.id}
}

// cancelWait ends the blocked get or wait with request id, if any; its
// goroutine answers it with the keys still missing.
func (c *serverConn) cancelWait(id uint64) {
	c.mu.Lock()
	cancel := c.waits[id]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// send writes one response. A write that fails or times out closes the
// connection, which ends serve.
func (c *serverConn) send(r *response) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var err error
	c.wbuf, err = appendResponse(c.wbuf[:0], r)
	if err != nil {
		c.wbuf, _ = appendResponse(c.wbuf[:0], errorResponse(r.id, err))
	}
	c.wbuf, _ = c.out.sealFrame(c.wbuf, 0)
	_ = c.conn.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
	if _, err := c.conn.Write(c.wbuf); err != nil {
		c.cancel()
		_ = c.conn.Close()
	}
	if cap(c.wbuf) > readBufferBytes {
		c.wbuf = nil // do not keep a large value's buffer
	}
}
