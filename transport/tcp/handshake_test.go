package tcp

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// connectPair runs Connect on two listeners at once and returns both
// results.
func connectPair(t *testing.T, ctx context.Context, l0, l1 *Listener) ([2]*Endpoint, [2]error) {
	t.Helper()
	addrs := []string{l0.Addr(), l1.Addr()}
	var eps [2]*Endpoint
	var errs [2]error
	done := make(chan struct{})
	go func() {
		eps[1], errs[1] = l1.Connect(ctx, addrs)
		close(done)
	}()
	eps[0], errs[0] = l0.Connect(ctx, addrs)
	<-done
	for _, ep := range eps {
		if ep != nil {
			t.Cleanup(func() { _ = ep.Close() })
		}
	}
	return eps, errs
}

func listen(t *testing.T, cfg Config) *Listener {
	t.Helper()
	l, err := Listen(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func TestHandshakeRefusesOtherJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	l0 := listen(t, Config{Rank: 0, JobID: 1})
	l1 := listen(t, Config{Rank: 1, JobID: 2})
	_, errs := connectPair(t, ctx, l0, l1)
	require.ErrorIs(t, errs[0], ErrRefused)
	require.ErrorContains(t, errs[0], "rank 1 says: job id 0x1, want 0x2")
	// The accepting side waits for a proper rank 0 until ctx ends, and then
	// says what it refused.
	require.ErrorIs(t, errs[1], context.DeadlineExceeded)
	require.ErrorContains(t, errs[1], "no connection from ranks [0]")
	require.ErrorContains(t, errs[1], "job id 0x1, want 0x2")
}

func TestHandshakeRefusesOtherWorldSize(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	l0 := listen(t, Config{Rank: 0})
	l1 := listen(t, Config{Rank: 1})
	done := make(chan error, 1)
	go func() { _, err := l1.Connect(ctx, []string{l0.Addr(), l1.Addr()}); done <- err }()
	_, err := l0.Connect(ctx, []string{l0.Addr(), l1.Addr(), "127.0.0.1:1"})
	require.ErrorIs(t, err, ErrRefused)
	require.ErrorContains(t, err, "world size 3, want 2")
	require.Error(t, <-done)
}

// TestHandshakeRefusesStranger sends a non-gocoll request to a listener:
// the stranger gets a refusal with a reason, and the world forms anyway.
func TestHandshakeRefusesStranger(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l0 := listen(t, Config{Rank: 0})
	l1 := listen(t, Config{Rank: 1})
	addrs := []string{l0.Addr(), l1.Addr()}
	type result struct {
		ep  *Endpoint
		err error
	}
	done := make(chan result, 1)
	go func() { ep, err := l1.Connect(ctx, addrs); done <- result{ep, err} }()

	nc, err := net.Dial("tcp", l1.Addr())
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	require.NoError(t, err)
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	_, _, _, err = readReply(nc)
	require.ErrorIs(t, err, ErrRefused)
	require.ErrorContains(t, err, "not a gocoll tcp transport peer")

	ep0, err := l0.Connect(ctx, addrs)
	require.NoError(t, err)
	defer ep0.Close()
	r := <-done
	require.NoError(t, r.err)
	defer r.ep.Close()
	require.Equal(t, 1, r.ep.Rank())
}

func TestConfigRejectsOutOfRange(t *testing.T) {
	for _, cfg := range []Config{
		{ConnsPerPeer: MaxConnsPerPeer + 1},
		{EagerLimit: MaxEagerLimit + 1},
		{ChunkBytes: 100},
		{Rank: -1},
		{IOBufferBytes: 1},
	} {
		_, err := Listen(context.Background(), cfg)
		require.ErrorContains(t, err, "out of range", "config %+v", cfg)
	}
	l := listen(t, Config{Rank: 2})
	_, err := l.Connect(context.Background(), []string{"a", "b"})
	require.ErrorContains(t, err, "rank 2 in a world of 2")
}

var sampleHellos = []hello{
	{version: helloVersion, connIndex: 1, conns: 2, job: 7, size: 4, from: 0, to: 3, credit: 1 << 20},
	{version: helloVersion},
}

// FuzzParseHello checks that any bytes either parse into a hello that
// encodes back to the same bytes, or give an ErrRefused error.
func FuzzParseHello(f *testing.F) {
	for _, h := range sampleHellos {
		f.Add(appendHello(nil, h))
	}
	f.Add([]byte(helloMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseHello(b)
		if err != nil {
			require.ErrorIs(t, err, ErrRefused)
			return
		}
		require.Equal(t, b[:helloLen], appendHello(nil, h))
	})
}

// FuzzReadReply checks that any reply either is an accepted hello or gives
// an error, never a panic or a hang.
func FuzzReadReply(f *testing.F) {
	f.Add(appendReply(nil, sampleHellos[0], nil, nil))
	f.Add(appendReply(nil, sampleHellos[0], nil, ErrRefused))
	keyed := sampleHellos[0]
	keyed.keyed = true
	f.Add(appendReply(nil, keyed, bytes.Repeat([]byte{7}, nonceLen+proofLen), nil))
	f.Add(appendReply(nil, keyed, make([]byte, nonceLen+proofLen), ErrRefused))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, raw, auth, err := readReply(bytes.NewReader(b))
		if err == nil {
			n := helloLen + len(auth) + 2
			require.Equal(t, appendReply(nil, h, auth, nil), b[:n])
			require.Equal(t, b[:helloLen], raw)
		}
	})
}

func TestReplyRoundTrip(t *testing.T) {
	h := sampleHellos[0]
	got, _, _, err := readReply(bytes.NewReader(appendReply(nil, h, nil, nil)))
	require.NoError(t, err)
	require.Equal(t, h, got)
	_, _, _, err = readReply(bytes.NewReader(appendReply(nil, h, nil, io.ErrClosedPipe)))
	require.ErrorIs(t, err, ErrRefused)
	require.ErrorContains(t, err, "rank 0 says: io: read/write on closed pipe")
}
