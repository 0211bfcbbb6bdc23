package tcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// mesher establishes the connections of one Connect call.
type mesher struct {
	cfg   Config
	size  int
	grant int64
	addrs []string
	links chan link  // established connections
	errs  chan error // the first fatal dial error

	hk []byte // the handshake key (auth.go); nil without Config.Key

	mu      sync.Mutex
	refusal error // the last connection this side refused
	refused int64 // handshakes refused for the job key
}

// collect waits until every expected connection is established, a dial
// fails for good, or ctx ends. It returns the links it has in every case.
func (m *mesher) collect(ctx context.Context) ([]link, error) {
	want := (m.size - 1) * m.cfg.ConnsPerPeer
	have := map[[2]int]bool{}
	var links []link
	for len(links) < want {
		select {
		case lk := <-m.links:
			if have[[2]int{lk.peer, lk.index}] {
				_ = lk.nc.Close()
				m.noteRefusal(fmt.Errorf("%w: duplicate connection %d from rank %d", ErrRefused, lk.index, lk.peer))
				continue
			}
			have[[2]int{lk.peer, lk.index}] = true
			links = append(links, lk)
		case err := <-m.errs:
			return links, err
		case <-ctx.Done():
			return links, m.timeoutError(ctx, have)
		}
	}
	return links, nil
}

// timeoutError describes which ranks are missing when ctx ended.
func (m *mesher) timeoutError(ctx context.Context, have map[[2]int]bool) error {
	var missing []int
	for peer := range m.size {
		for index := range m.cfg.ConnsPerPeer {
			if peer != m.cfg.Rank && !have[[2]int{peer, index}] && !slices.Contains(missing, peer) {
				missing = append(missing, peer)
			}
		}
	}
	err := fmt.Errorf("no connection from ranks %v: %w", missing, ctx.Err())
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refusal != nil {
		err = fmt.Errorf("%w (last refused connection: %w)", err, m.refusal)
	}
	return err
}

func (m *mesher) noteRefusal(err error) {
	m.mu.Lock()
	m.refusal = err
	m.mu.Unlock()
}

// deliver hands an established link to collect, or closes it if collect
// has stopped.
func (m *mesher) deliver(ctx context.Context, lk link) {
	select {
	case m.links <- lk:
	case <-ctx.Done():
		_ = lk.nc.Close()
	}
}

// drain closes links that no one collected; all senders have stopped.
func (m *mesher) drain() {
	for {
		select {
		case lk := <-m.links:
			_ = lk.nc.Close()
		default:
			return
		}
	}
}

// hello returns this side's hello to peer on connection index.
func (m *mesher) hello(peer, index int) hello {
	return hello{version: helloVersion, connIndex: uint16(index), conns: uint16(m.cfg.ConnsPerPeer),
		job: m.cfg.JobID, size: uint32(m.size), from: uint32(m.cfg.Rank), to: uint32(peer), credit: uint64(m.grant),
		keyed: m.hk != nil, payload: m.payloadFor(peer)}
}

// dial connects to a higher rank, retrying until ctx ends; a refused
// handshake ends Connect.
func (m *mesher) dial(ctx context.Context, peer, index int) {
	d := net.Dialer{Timeout: m.cfg.DialTimeout}
	d.SetMultipathTCP(m.cfg.MultipathTCP)
	backoff := 5 * time.Millisecond
	for {
		nc, err := d.DialContext(ctx, "tcp", m.addrs[peer])
		if err == nil {
			var lk link
			lk, err = m.dialHandshake(ctx, nc, peer, index)
			if err == nil {
				m.deliver(ctx, lk)
				return
			}
			_ = nc.Close()
			if errors.Is(err, ErrRefused) {
				select {
				case m.errs <- fmt.Errorf("rank %d at %s: %w", peer, m.addrs[peer], err):
				default:
				}
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
			backoff = min(2*backoff, 200*time.Millisecond)
		}
	}
}

// dialHandshake sends our hello and checks the peer's reply.
func (m *mesher) dialHandshake(ctx context.Context, nc net.Conn, peer, index int) (link, error) {
	if err := m.tune(nc); err != nil {
		return link{}, err
	}
	_ = nc.SetDeadline(time.Now().Add(m.cfg.DialTimeout))
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Now()) })
	defer stop()
	mine := appendHello(nil, m.hello(peer, index))
	var nonce [nonceLen]byte
	if m.hk != nil {
		var err error
		if nonce, err = jobkey.NewNonce(); err != nil {
			return link{}, err
		}
	}
	msg := mine
	if m.hk != nil {
		msg = append(append([]byte(nil), mine...), nonce[:]...)
	}
	if _, err := nc.Write(msg); err != nil {
		return link{}, fmt.Errorf("sending hello: %w", err)
	}
	got, raw, auth, err := readReply(nc)
	if err != nil {
		return link{}, err
	}
	want := m.hello(peer, index)
	want.from, want.to = uint32(peer), uint32(m.cfg.Rank)
	if err := checkHello(got, want); err != nil {
		return link{}, err
	}
	lk := link{peer: peer, index: index, nc: nc, credit: int64(got.credit)}
	if m.hk != nil {
		if err := m.proveDial(nc, peer, index, got, mine, raw, auth, nonce[:], &lk); err != nil {
			return link{}, err
		}
	}
	if !stop() {
		return link{}, ctx.Err()
	}
	_ = nc.SetDeadline(time.Time{})
	return lk, nil
}

// acceptLoop accepts connections until the listener closes, handshaking
// each on its own goroutine.
func (m *mesher) acceptLoop(ctx context.Context, ln net.Listener) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			lk, err := m.acceptHandshake(ctx, nc)
			if err != nil {
				_ = nc.Close()
				m.noteRefusal(err)
				return
			}
			m.deliver(ctx, lk)
		}()
	}
}

// acceptHandshake reads a lower rank's hello, checks it, and replies.
func (m *mesher) acceptHandshake(ctx context.Context, nc net.Conn) (link, error) {
	if err := m.tune(nc); err != nil {
		return link{}, err
	}
	_ = nc.SetDeadline(time.Now().Add(m.cfg.DialTimeout))
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Now()) })
	defer stop()
	got, raw, err := readHello(nc)
	var theirNonce []byte
	if err == nil {
		want := m.hello(int(got.from), int(got.connIndex))
		want.from, want.to = got.from, uint32(m.cfg.Rank)
		err = checkHello(got, want)
		if err == nil && (int(got.from) >= m.cfg.Rank || int(got.connIndex) >= m.cfg.ConnsPerPeer) {
			err = fmt.Errorf("%w: rank %d connection %d may not dial rank %d", ErrRefused, got.from, got.connIndex, m.cfg.Rank)
		}
		if err == nil && got.keyed {
			theirNonce = make([]byte, nonceLen)
			if _, rerr := io.ReadFull(nc, theirNonce); rerr != nil {
				err = fmt.Errorf("%w: reading the hello's nonce: %v", ErrRefused, rerr)
			}
		}
		if err == nil {
			err = m.keysMatch(got)
		}
	}
	reply := m.hello(int(got.from), int(got.connIndex))
	mine := appendHello(nil, reply)
	var auth, nonce []byte
	if m.hk != nil {
		nonce, auth = make([]byte, nonceLen), make([]byte, nonceLen+proofLen)
		if err == nil {
			n, nerr := jobkey.NewNonce()
			if nerr != nil {
				err = nerr
			}
			nonce = n[:]
			copy(auth, nonce)
			copy(auth[nonceLen:], proof(m.hk, "accept", raw, mine, theirNonce, nonce))
		}
	}
	if _, werr := nc.Write(appendReply(nil, reply, auth, err)); werr != nil && err == nil {
		err = fmt.Errorf("replying to hello: %w", werr)
	}
	lk := link{peer: int(got.from), index: int(got.connIndex), nc: nc, credit: int64(got.credit)}
	if err == nil && m.hk != nil {
		err = m.checkDialProof(nc, got.payload, raw, mine, theirNonce, nonce, &lk)
	}
	if err != nil {
		return link{}, fmt.Errorf("connection from %s: %w", nc.RemoteAddr(), err)
	}
	if !stop() {
		return link{}, ctx.Err()
	}
	_ = nc.SetDeadline(time.Time{})
	return lk, nil
}

// readHello reads a hello, checking the magic before reading the rest so
// that a stranger who sent fewer bytes is refused at once; it returns the
// hello as sent too.
func readHello(r io.Reader) (hello, []byte, error) {
	b := make([]byte, helloLen)
	if _, err := io.ReadFull(r, b[:len(helloMagic)]); err != nil {
		return hello{}, nil, fmt.Errorf("%w: reading hello: %v", ErrRefused, err)
	}
	if string(b[:len(helloMagic)]) == helloMagic {
		if _, err := io.ReadFull(r, b[len(helloMagic):]); err != nil {
			return hello{}, nil, fmt.Errorf("%w: reading hello: %v", ErrRefused, err)
		}
	}
	h, err := parseHello(b)
	return h, b, err
}

// tune sets the socket options of a new connection.
func (m *mesher) tune(nc net.Conn) error {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nil
	}
	if err := tc.SetNoDelay(true); err != nil {
		return fmt.Errorf("setting TCP_NODELAY: %w", err)
	}
	if n := m.cfg.SocketBufferBytes; n > 0 {
		if err := tc.SetReadBuffer(n); err != nil {
			return fmt.Errorf("setting SO_RCVBUF: %w", err)
		}
		if err := tc.SetWriteBuffer(n); err != nil {
			return fmt.Errorf("setting SO_SNDBUF: %w", err)
		}
	}
	return nil
}
