package tcp

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/transport"
)

func tcpKey(t testing.TB, text string) jobkey.Key {
	t.Helper()
	k, err := jobkey.Parse(text)
	require.NoError(t, err)
	return k
}

// connectAll connects one listener per config (rank i = cfgs[i]) and
// returns each rank's endpoint and error, and how long its Connect took.
func connectAll(t *testing.T, cfgs []Config, timeout time.Duration) ([]*Endpoint, []error, []time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ls := make([]*Listener, len(cfgs))
	addrs := make([]string, len(cfgs))
	for r, c := range cfgs {
		c.Rank = r
		l, err := Listen(ctx, c)
		require.NoError(t, err)
		ls[r], addrs[r] = l, l.Addr()
	}
	eps, errs, took := make([]*Endpoint, len(cfgs)), make([]error, len(cfgs)), make([]time.Duration, len(cfgs))
	var wg sync.WaitGroup
	for r, l := range ls {
		wg.Go(func() {
			start := time.Now()
			eps[r], errs[r] = l.Connect(ctx, addrs)
			took[r] = time.Since(start)
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, ep := range eps {
			if ep != nil {
				_ = ep.Close()
			}
		}
	})
	return eps, errs, took
}

// Keyed connections carry eager and rendezvous messages exact, striped
// over several connections, in every payload mode (the higher of the two
// sides' wins).
func TestAuthFramesDeliver(t *testing.T) {
	for _, modes := range [][2]PayloadMode{{PayloadClear, PayloadClear}, {PayloadTagged, PayloadClear}, {PayloadClear, PayloadEncrypted}} {
		t.Run(fmt.Sprint(modes), func(t *testing.T) { testAuthFrames(t, modes) })
	}
}

func testAuthFrames(t *testing.T, modes [2]PayloadMode) {
	cfg := Config{Key: tcpKey(t, "test-key-0123456789abcdef"), ConnsPerPeer: 2, ChunkBytes: 4 << 10}
	c0, c1 := cfg, cfg
	c0.Payload, c1.Payload = modes[0], modes[1]
	eps, errs, _ := connectAll(t, []Config{c0, c1}, 10*time.Second)
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	ctx := waitCtx(t)
	for i, size := range []int{0, 1, 1000, 70_000, 300_000} {
		msg := bytes.Repeat([]byte{byte(i + 1), 2, 3}, size/3+1)[:size]
		buf := make([]byte, size)
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: uint64(i)}}
		r := eps[1].Recv(0, tag, buf)
		s := eps[0].Send(1, tag, msg)
		_, err := s.Wait(ctx)
		require.NoError(t, err)
		n, err := r.Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, size, n)
		require.Equal(t, msg, buf)
	}
	require.Zero(t, transport.StatsOf(eps[1]).AuthDropped)
	want := max(modes[0], modes[1])
	for _, ep := range eps {
		for _, p := range ep.peers {
			for _, c := range p.conns {
				require.Equal(t, want, c.auth.payload)
			}
		}
	}
}

// A body changed on the way fails its tag, tagged or encrypted.
func TestAuthBodyTag(t *testing.T) {
	k := tcpKey(t, "test-key-0123456789abcdef")
	dn, an := bytes.Repeat([]byte{1}, nonceLen), bytes.Repeat([]byte{2}, nonceLen)
	for _, mode := range []PayloadMode{PayloadTagged, PayloadEncrypted} {
		tx := newFrameAuth(k, mode, true, dn, an, 0, 1, 0)
		rx := newFrameAuth(k, mode, false, dn, an, 0, 1, 0)
		body := []byte("a body of some bytes")
		var w bytes.Buffer
		for range 2 {
			h := tx.seal(appendHeader(nil, header{kind: kindAbort, body: uint32(len(body))}))
			w.Write(h)
			require.NoError(t, tx.writeBody(&w, body))
		}
		b := w.Bytes()
		one := len(b) / 2
		if mode == PayloadEncrypted {
			require.False(t, bytes.Contains(b, body), "encrypted body in clear")
		}
		r := bytes.NewReader(b[headerLen:one])
		require.NoError(t, rx.readTag(r, b[:headerLen]))
		got := make([]byte, len(body))
		require.NoError(t, rx.readBody(r, got))
		require.Equal(t, body, got)
		second := append([]byte(nil), b[one:]...)
		second[len(second)-tagLen-3] ^= 1 // a body byte
		r = bytes.NewReader(second[headerLen:])
		require.NoError(t, rx.readTag(r, second[:headerLen]))
		require.ErrorIs(t, rx.readBody(r, got), ErrAuth, "mode %d", mode)
	}
}

// A rank with another key, or none, is refused at the handshake in one
// line, without retries.
func TestAuthHandshakeRefused(t *testing.T) {
	good := Config{Key: tcpKey(t, "test-key-0123456789abcdef")}
	bad := Config{Key: tcpKey(t, "another-key-0123456789abcdef")}
	for _, tc := range []struct {
		name       string
		dialer     Config // rank 0
		acceptor   Config // rank 1
		wantDialer string
	}{
		{"wrong key", bad, good, "rank 1 holds another job key"},
		{"dialer without key", Config{}, good, "holds no job key"},
		{"acceptor without key", good, Config{}, "holds a job key and this rank none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eps, errs, took := connectAll(t, []Config{tc.dialer, tc.acceptor}, 3*time.Second)
			require.Nil(t, eps[0])
			require.ErrorIs(t, errs[0], ErrRefused)
			require.Contains(t, errs[0].Error(), tc.wantDialer)
			require.False(t, strings.Contains(errs[0].Error(), "\n"))
			require.Less(t, took[0], 2900*time.Millisecond, "the dialer retried until its deadline")
			require.Error(t, errs[1], "the acceptor formed a world with a stranger")
			require.Contains(t, errs[1].Error(), "last refused connection")
			t.Logf("dialer: %v\nacceptor: %v", errs[0], errs[1])
		})
	}
}

// A frame whose header was changed, or that is replayed, fails its tag.
func TestAuthFrameTag(t *testing.T) {
	k := tcpKey(t, "test-key-0123456789abcdef")
	dn, an := bytes.Repeat([]byte{1}, nonceLen), bytes.Repeat([]byte{2}, nonceLen)
	tx := newFrameAuth(k, PayloadClear, true, dn, an, 0, 1, 0)
	rx := newFrameAuth(k, PayloadClear, false, dn, an, 0, 1, 0)
	var stream bytes.Buffer
	for i := range 3 {
		h := appendHeader(nil, header{kind: kindCredit, arg: uint64(i + 1)})
		stream.Write(tx.seal(h))
	}
	b := stream.Bytes()
	one := headerLen + tagLen
	require.NoError(t, rx.readTag(bytes.NewReader(b[headerLen:one]), b[:headerLen]))
	// The same frame again: the count moved on.
	require.ErrorIs(t, rx.readTag(bytes.NewReader(b[headerLen:one]), b[:headerLen]), ErrAuth)
	// A changed header.
	rx2 := newFrameAuth(k, PayloadClear, false, dn, an, 0, 1, 0)
	changed := append([]byte(nil), b[:one]...)
	changed[33]++
	require.ErrorIs(t, rx2.readTag(bytes.NewReader(changed[headerLen:]), changed[:headerLen]), ErrAuth)
	// Another connection's key.
	rx3 := newFrameAuth(k, PayloadClear, false, dn, an, 0, 1, 1)
	require.ErrorIs(t, rx3.readTag(bytes.NewReader(b[headerLen:one]), b[:headerLen]), ErrAuth)
	// The other direction's key.
	require.ErrorIs(t, tx.readTag(bytes.NewReader(b[headerLen:one]), b[:headerLen]), ErrAuth)
}
