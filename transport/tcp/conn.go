package tcp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// conn is one TCP connection to a peer, with a reader goroutine that
// dispatches incoming frames and a writer goroutine that owns all writes.
//
// The writer's queues hold references to callers' buffers, never copies:
// one frame per posted request plus small control frames, so their length
// is bounded by the requests the caller has posted.
type conn struct {
	ep    *Endpoint
	peer  *peer
	index int // 0 carries control frames and eager messages
	nc    net.Conn
	br    *bufio.Reader
	bw    *bufio.Writer
	auth  *frameAuth // nil without a key

	qmu       sync.Mutex
	ctrl      []outFrame // control frames and eager messages, in order
	bulk      []*bulkJob // rendezvous transfers, served one chunk each in turn
	wake      chan struct{}
	stop      chan struct{} // closed to end the writer once it has written and flushed what it holds
	stopOnce  sync.Once
	closeOnce sync.Once
	written   chan struct{} // closed when the writer has ended
	readDone  chan struct{} // closed when the reader has ended
}

// outFrame is a queued frame. For kindData the body is req's buffer,
// written between req.begin and req.end; for kindRTS the frame is skipped
// if req has completed; other frames carry body.
type outFrame struct {
	h    header
	req  *request
	body []byte
}

// bulkJob sends the chunks of one rendezvous message that belong to one
// connection: offsets next, next+stride, ... below len(req.buf).
type bulkJob struct {
	req       *request
	msgID     uint64
	tag       transport.Tag
	next      int
	stride    int
	chunk     int
	withdrawn bool
}

// newConn wraps nc, reading and writing it through rawIO where it has a
// descriptor (on Linux; elsewhere through nc itself).
func newConn(e *Endpoint, p *peer, index int, nc net.Conn) *conn {
	var rw io.ReadWriter = nc
	if raw, ok := newRawIO(nc); ok {
		rw = raw
	}
	return &conn{ep: e, peer: p, index: index, nc: nc,
		br:   bufio.NewReaderSize(rw, e.cfg.IOBufferBytes),
		bw:   bufio.NewWriterSize(rw, e.cfg.IOBufferBytes),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), written: make(chan struct{}),
		readDone: make(chan struct{})}
}

func (c *conn) enqueue(f outFrame) {
	c.qmu.Lock()
	c.ctrl = append(c.ctrl, f)
	c.qmu.Unlock()
	c.signal()
}

func (c *conn) enqueueBulk(j *bulkJob) {
	c.qmu.Lock()
	c.bulk = append(c.bulk, j)
	c.qmu.Unlock()
	c.signal()
}

func (c *conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// shutdown stops the writer and closes the socket, which ends the reader.
func (c *conn) shutdown() {
	c.stopWriter()
	c.closeOnce.Do(func() { _ = c.nc.Close() })
}

// stopWriter asks the writer to end once it has written and flushed what
// it holds.
func (c *conn) stopWriter() { c.stopOnce.Do(func() { close(c.stop) }) }

// flushAndShutdown lets the writer write and flush what it holds, a send
// having completed once its frame was in the write buffer, then
// half-closes the socket and lets the reader read (and dispatch, to a
// closed endpoint) what the peer still sends until the peer closes too,
// all by deadline (a peer that reads nothing, or never closes), and then
// shuts c down.
//
// Closing a socket whose input holds unread bytes (credit returns, frames
// of abandoned operations) makes Linux send a reset instead of a FIN and
// drop its send queue, losing frames the writer had flushed into the
// kernel but the kernel had not sent yet; the half-close sends the FIN
// after them, and the socket is closed only once its input is drained.
func (c *conn) flushAndShutdown(deadline time.Time) {
	_ = c.nc.SetWriteDeadline(deadline)
	c.stopWriter()
	t := time.NewTimer(time.Until(deadline) + closeFlushSlack)
	defer t.Stop()
	select {
	case <-c.written:
		if hc, ok := c.nc.(interface{ CloseWrite() error }); ok && hc.CloseWrite() == nil {
			select {
			case <-c.readDone:
			case <-t.C: // a peer that keeps its side open
			}
		}
	case <-t.C: // a writer that never started
	}
	c.shutdown()
}

// closeFlushSlack is how long flushAndShutdown waits for the writer beyond
// the write deadline, by which any write it is blocked in has failed.
const closeFlushSlack = 100 * time.Millisecond

// readLoop reads and dispatches frames until the connection fails or the
// peer closes it. A clean end of stream (at a frame boundary) is the
// peer's half-close (flushAndShutdown): it has written all it will on c,
// but its other connections may still carry its last frames, so the peer
// fails here only once all of them have ended (peerClosedConn); until
// then c's writer goes on, the closing peer reading what it sends.
func (c *conn) readLoop() {
	defer c.ep.wg.Done()
	defer close(c.readDone)
	var buf [headerLen]byte
	for {
		err := c.readFrame(buf[:])
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			if !c.ep.peerClosedConn(c.peer) {
				return
			}
			err = fmt.Errorf("connection %d closed by the peer", c.index)
		} else if !errors.Is(err, errProtocol) {
			err = fmt.Errorf("connection %d: %w", c.index, err)
		}
		c.ep.peerFailed(c.peer, err)
		c.shutdown()
		return
	}
}

func (c *conn) readFrame(buf []byte) error {
	if _, err := io.ReadFull(c.br, buf); err != nil {
		return err
	}
	if c.auth != nil {
		if err := c.auth.readTag(c.br, buf); err != nil {
			if errors.Is(err, ErrAuth) {
				c.ep.authDropped.Add(1)
			}
			return err
		}
	}
	h, err := parseHeader(buf)
	if err != nil {
		return err
	}
	if c.index != 0 && h.kind != kindRData {
		return fmt.Errorf("%w: %s frame on data connection %d", errProtocol, h.kind, c.index)
	}
	switch h.kind {
	case kindData:
		return c.onData(h)
	case kindRTS:
		return c.onRTS(h)
	case kindCTS:
		c.onCTS(h)
		return nil
	case kindRData:
		return c.onRData(h)
	case kindCredit:
		return c.onCredit(h)
	case kindAbort:
		return c.onAbort(h)
	}
	panic("tcp: parseHeader accepted an unknown frame kind")
}

// readBody reads exactly len(b) body bytes into b (checking or
// decrypting them on a keyed connection that wants it).
func (c *conn) readBody(b []byte) error {
	var err error
	if c.auth != nil {
		err = c.auth.readBody(c.br, b)
		if errors.Is(err, ErrAuth) {
			c.ep.authDropped.Add(1)
		}
	} else {
		_, err = io.ReadFull(c.br, b)
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// discard skips n body bytes.
func (c *conn) discard(n int) error {
	if c.auth != nil && c.auth.payload != PayloadClear {
		return c.readBody(make([]byte, n)) // its tag is checked, its count kept
	}
	_, err := c.br.Discard(n)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// writeLoop writes queued frames until the connection stops: all control
// frames first, then one chunk of the next rendezvous transfer, flushing
// the write buffer whenever the queues run empty.
func (c *conn) writeLoop() {
	defer c.ep.wg.Done()
	defer close(c.written)
	var frames []outFrame
	var hdr []byte
	for {
		c.qmu.Lock()
		frames = append(frames[:0], c.ctrl...)
		clear(c.ctrl)
		c.ctrl = c.ctrl[:0]
		job, off := c.nextChunk()
		c.qmu.Unlock()
		var err error
		if len(frames) == 0 && job == nil {
			if err = c.bw.Flush(); err == nil {
				select {
				case <-c.wake:
					continue
				case <-c.stop:
					return
				}
			}
		}
		for i := 0; i < len(frames) && err == nil; i++ {
			hdr, err = c.writeFrame(hdr, &frames[i])
		}
		clear(frames)
		if job != nil && err == nil {
			hdr, err = c.writeChunk(hdr, job, off)
		}
		if err != nil {
			c.ep.peerFailed(c.peer, fmt.Errorf("connection %d: write: %w", c.index, err))
			c.shutdown()
			return
		}
	}
}

// nextChunk picks the next rendezvous chunk to write, rotating among the
// transfers; c.qmu is held.
func (c *conn) nextChunk() (*bulkJob, int) {
	for len(c.bulk) > 0 {
		j := c.bulk[0]
		c.bulk[0] = nil
		c.bulk = c.bulk[1:]
		if j.withdrawn {
			continue
		}
		off := j.next
		j.next += j.stride
		if j.next < len(j.req.buf) {
			c.bulk = append(c.bulk, j)
		}
		return j, off
	}
	return nil, 0
}

func (c *conn) writeFrame(hdr []byte, f *outFrame) ([]byte, error) {
	body := f.body
	switch {
	case f.h.kind == kindData:
		if !f.req.begin() {
			c.ep.refundCredit(c.peer, len(f.req.buf))
			return hdr, nil
		}
		body = f.req.buf
	case f.req != nil && f.req.isDone():
		return hdr, nil // an RTS of a send that has ended
	}
	hdr = c.sealed(appendHeader(hdr[:0], f.h))
	_, err := c.bw.Write(hdr)
	if err == nil {
		err = c.writeBody(body)
	}
	if f.h.kind == kindData {
		f.req.end(len(body), err == nil)
	}
	return hdr, err
}

func (c *conn) writeChunk(hdr []byte, j *bulkJob, off int) ([]byte, error) {
	h := header{kind: kindRData, tag: j.tag, msgID: j.msgID, arg: uint64(off)}
	if !j.req.begin() {
		j.withdrawn = true
		h.flags = rdataWithdrawn
		hdr = c.sealed(appendHeader(hdr[:0], h))
		_, err := c.bw.Write(hdr)
		return hdr, err
	}
	body := j.req.buf[off:min(off+j.chunk, len(j.req.buf))]
	h.body = uint32(len(body))
	hdr = c.sealed(appendHeader(hdr[:0], h))
	_, err := c.bw.Write(hdr)
	if err == nil {
		err = c.writeBody(body)
	}
	j.req.end(len(body), err == nil)
	return hdr, err
}
