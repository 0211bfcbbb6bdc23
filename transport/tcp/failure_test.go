package tcp

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/transporttest"
)

func tag(op uint64, seq uint32) transport.Tag {
	return transport.Tag{OpKey: transport.OpKey{Comm: 9, Op: op}, Seq: seq}
}

func waitCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// requirePeerError waits for r and requires a *transport.PeerError naming
// rank.
func requirePeerError(t *testing.T, r transport.Request, rank int) {
	t.Helper()
	_, err := r.Wait(waitCtx(t))
	var pe *transport.PeerError
	require.ErrorAs(t, err, &pe, "got %v", err)
	require.Equal(t, rank, pe.Rank)
}

// TestPeerDeath closes rank 2 while ranks 0 and 1 have receives from it
// and a rendezvous send to it pending: they fail naming rank 2, later
// requests with rank 2 fail at once, and ranks 0 and 1 still talk.
func TestPeerDeath(t *testing.T) {
	eps := newTestWorld(t, 3, Config{})
	r0 := eps[0].Recv(2, tag(1, 0), make([]byte, 8))
	r1 := eps[1].Recv(2, tag(1, 0), make([]byte, 8))
	s0 := eps[0].Send(2, tag(1, 1), make([]byte, 1<<20)) // rank 2 never receives it
	require.NoError(t, eps[2].Close())

	requirePeerError(t, r0, 2)
	requirePeerError(t, r1, 2)
	requirePeerError(t, s0, 2)
	requirePeerError(t, eps[0].Recv(2, tag(2, 0), make([]byte, 8)), 2)
	requirePeerError(t, eps[1].Send(2, tag(2, 0), make([]byte, 8)), 2)

	buf := make([]byte, 100)
	s := eps[0].Send(1, tag(3, 0), transporttest.Pattern(100, 1))
	n, err := eps[1].Recv(0, tag(3, 0), buf).Wait(waitCtx(t))
	require.NoError(t, err)
	require.Equal(t, 100, n)
	require.NoError(t, transporttest.Verify(buf, 1))
	_, err = s.Wait(waitCtx(t))
	require.NoError(t, err)
}

// TestBrokenLink breaks the sockets between ranks 0 and 1 only, as a
// network failure would, in the middle of a rendezvous transfer.
func TestBrokenLink(t *testing.T) {
	eps := newTestWorld(t, 3, Config{ConnsPerPeer: 2})
	big := make([]byte, 64<<20)
	recv := eps[1].Recv(0, tag(1, 0), big)
	send := eps[0].Send(1, tag(1, 0), make([]byte, len(big)))
	eps[0].mu.Lock()
	conns := eps[0].peers[1].conns
	eps[0].mu.Unlock()
	for _, c := range conns {
		_ = c.nc.Close()
	}
	requirePeerError(t, recv, 0)
	requirePeerError(t, send, 1)
	requirePeerError(t, eps[1].Recv(0, tag(2, 0), nil), 0)
	requirePeerError(t, eps[0].Recv(1, tag(2, 0), nil), 1)
	// Rank 2 is unaffected.
	s := eps[2].Send(0, tag(3, 0), []byte("ok"))
	buf := make([]byte, 2)
	_, err := eps[0].Recv(2, tag(3, 0), buf).Wait(waitCtx(t))
	require.NoError(t, err)
	require.Equal(t, "ok", string(buf))
	_, err = s.Wait(waitCtx(t))
	require.NoError(t, err)
}

// TestDataArrivedBeforePeerDeath checks that a message that arrived before
// its sender died can still be received.
func TestDataArrivedBeforePeerDeath(t *testing.T) {
	eps := newTestWorld(t, 2, Config{})
	s := eps[0].Send(1, tag(1, 0), []byte("last words"))
	mark := eps[0].Send(1, tag(1, 1), nil)
	_, err := eps[1].Recv(0, tag(1, 1), nil).Wait(waitCtx(t))
	require.NoError(t, err)
	_, err = s.Wait(waitCtx(t))
	require.NoError(t, err)
	_, err = mark.Wait(waitCtx(t))
	require.NoError(t, err)
	require.NoError(t, eps[0].Close())
	requirePeerError(t, eps[1].Recv(0, tag(1, 2), nil), 0)
	buf := make([]byte, 20)
	n, err := eps[1].Recv(0, tag(1, 0), buf).Wait(waitCtx(t))
	require.NoError(t, err)
	require.Equal(t, "last words", string(buf[:n]))
}

// rawPeer handshakes as rank 0 with a listener of rank 1 and returns the
// connection, so that a test can send arbitrary frames.
func rawPeer(t *testing.T, cfg Config) (*Endpoint, net.Conn) {
	t.Helper()
	cfg.Rank = 1
	l := listen(t, cfg)
	done := make(chan *Endpoint, 1)
	go func() {
		ep, err := l.Connect(waitCtx(t), []string{"unused", l.Addr()})
		require.NoError(t, err)
		done <- ep
	}()
	nc, err := net.Dial("tcp", l.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	_, err = nc.Write(appendHello(nil, hello{version: helloVersion, conns: 1, size: 2, from: 0, to: 1}))
	require.NoError(t, err)
	_, _, _, err = readReply(nc)
	require.NoError(t, err)
	ep := <-done
	t.Cleanup(func() { _ = ep.Close() })
	return ep, nc
}

// TestProtocolViolation sends frames that break the protocol; the endpoint
// fails the peer with a PeerError wrapping the protocol error.
func TestProtocolViolation(t *testing.T) {
	for name, frames := range map[string][][]byte{
		"garbage":     {bytes.Repeat([]byte("x"), headerLen)},
		"over credit": {appendHeader(nil, header{kind: kindData, arg: 4096, body: 4096}), make([]byte, 4096)},
		"stray cts":   {appendHeader(nil, header{kind: kindRData, msgID: 1, arg: 1 << 30, body: 8})},
	} {
		t.Run(name, func(t *testing.T) {
			ep, nc := rawPeer(t, Config{UnexpectedBytesMax: 1024})
			r := ep.Recv(0, tag(1, 0), make([]byte, 8))
			for _, f := range frames {
				_, _ = nc.Write(f)
			}
			if name == "stray cts" {
				// Data for an unknown message is discarded, not an error.
				require.Never(t, func() bool { return r.(*request).isDone() }, 50*time.Millisecond, 5*time.Millisecond)
				_ = nc.Close()
				requirePeerError(t, r, 0)
				return
			}
			_, err := r.Wait(waitCtx(t))
			var pe *transport.PeerError
			require.ErrorAs(t, err, &pe)
			require.ErrorIs(t, err, errProtocol)
		})
	}
}

// TestCloseLeavesNoGoroutines builds and closes worlds (one that worked,
// one whose Connect failed) and checks that the goroutine count returns to
// where it was.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	eps := newTestWorldNoCleanup(t, 3, Config{ConnsPerPeer: 2})
	for i, ep := range eps {
		s := ep.Send((i+1)%3, tag(1, 0), make([]byte, 1<<20))
		_, err := eps[(i+1)%3].Recv(i, tag(1, 0), make([]byte, 1<<20)).Wait(waitCtx(t))
		require.NoError(t, err)
		_, err = s.Wait(waitCtx(t))
		require.NoError(t, err)
	}
	eps[0].Recv(1, tag(2, 0), nil) // left pending
	for _, ep := range eps {
		require.NoError(t, ep.Close())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, errs := connectPair(t, ctx, listen(t, Config{Rank: 0, JobID: 1}), listen(t, Config{Rank: 1}))
	require.ErrorIs(t, errs[0], ErrRefused)
	require.Error(t, errs[1])
	if !waitGoroutines(before, 5*time.Second) {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
}

func newTestWorldNoCleanup(t *testing.T, size int, cfg Config) []*Endpoint {
	eps, err := NewLocalWorld(waitCtx(t), size, cfg)
	require.NoError(t, err)
	return eps
}

// waitGoroutines waits until at most n goroutines run, or d passes.
func waitGoroutines(n int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
