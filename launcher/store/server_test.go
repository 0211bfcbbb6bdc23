package store

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWrongJobKeyRefused(t *testing.T) {
	srv := startServer(t, Config{})
	c := dial(t, srv)
	ctx := testCtx(t, long)
	_, err := Dial(ctx, srv.Addr().String(), ClientConfig{JobKey: mustKey("not-the-job-key-0123")})
	require.ErrorIs(t, err, ErrBadJobKey)
	require.Equal(t, "store: handshake with "+srv.Addr().String()+": store: job key refused: the client did not prove this job's key", err.Error())
	require.NoError(t, ctx.Err(), "refused at once, not at the deadline")
	require.Equal(t, uint64(1), srv.Stats().RefusedKey)
	require.NoError(t, c.Set(ctx, "still", []byte("served")), "the job's own client is unaffected")
	require.Equal(t, uint64(1), srv.Stats().Authenticated)

	_, err = Dial(ctx, srv.Addr().String(), ClientConfig{})
	require.ErrorIs(t, err, ErrInvalid, "a client needs a job key")
}

// rawExchange reads the server's challenge on a fresh connection, sends
// frame, and returns the server's first answer (untagged: there is no
// session) and whether the server then closed the connection.
func rawExchange(t *testing.T, srv *Server, frame []byte) (response, bool) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(long)))
	br := bufio.NewReader(conn)
	body, err := readFrame(br, DefaultMaxFrameBytes)
	require.NoError(t, err)
	_, err = parseChallenge(body)
	require.NoError(t, err)
	_, err = conn.Write(frame)
	require.NoError(t, err)
	body, err = readFrame(br, DefaultMaxFrameBytes)
	require.NoError(t, err)
	resp, err := parseResponse(body)
	require.NoError(t, err)
	_, err = br.ReadByte()
	return resp, err != nil
}

// A version 1 client sends its key in its first request: the server
// refuses the frame as a handshake, applies nothing, and the key's bytes
// are never compared (the server has no copy of them to compare).
func TestVersion1RequestRefused(t *testing.T) {
	srv := startServer(t, Config{})
	frame := []byte{0, 0, 0, 0, 1, byte(opSet), 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0}
	frame = binary.BigEndian.AppendUint16(frame, uint16(len(testJobKeyBytes)))
	frame = append(frame, testJobKeyBytes...)
	frame, err := appendItems(frame, [][]byte{[]byte("k"), []byte("v")})
	require.NoError(t, err)
	frame, _ = finishFrame(frame, 0)
	resp, closed := rawExchange(t, srv, frame)
	require.Equal(t, statusProtocol, resp.status, "not a version 2 handshake")
	require.True(t, closed)
	_, ok, err := srv.Local().TryGet(t.Context(), "k")
	require.NoError(t, err)
	require.False(t, ok, "the refused Set was not applied")
	require.Equal(t, uint64(1), srv.Stats().BadFrames)
}

func TestMalformedHandshakesClosed(t *testing.T) {
	srv := startServer(t, Config{})
	nonce := make([]byte, 16)
	cases := map[string]struct {
		frame  []byte
		status statusCode
	}{
		"too large":   {frame: []byte{0xff, 0xff, 0xff, 0xff}, status: statusLimit},
		"bad version": {frame: append(append([]byte{0, 0, 0, authBytes, 9}, nonce...), make([]byte, 32)...), status: statusProtocol},
		"short":       {frame: []byte{0, 0, 0, 3, 2, 0, 0}, status: statusProtocol},
		"wrong proof": {frame: appendAuth(nil, nonce, make([]byte, 32)), status: statusBadJobKey},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resp, closed := rawExchange(t, srv, tc.frame)
			require.Equal(t, tc.status, resp.status)
			require.Equal(t, uint64(0), resp.id)
			require.True(t, closed)
		})
	}
	st := srv.Stats()
	require.Equal(t, uint64(3), st.BadFrames)
	require.Equal(t, uint64(1), st.RefusedKey)
	require.Equal(t, uint64(0), st.Authenticated)
}

func TestBadArgumentsAnsweredConnectionKept(t *testing.T) {
	srv := startServer(t, Config{})
	c := dial(t, srv)
	ctx := testCtx(t, long)
	// An add whose delta is not 8 bytes breaks the op's format, not the
	// framing: the server answers ErrProtocol and keeps serving.
	_, err := c.call(ctx, &request{op: opAdd, items: [][]byte{[]byte("k"), {1}}}, nil)
	require.ErrorIs(t, err, ErrProtocol)
	require.NoError(t, c.Set(ctx, "k", nil))
}

func TestDialBeforeServerStarts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	ctx := testCtx(t, long)
	type dialed struct {
		c   *Client
		err error
	}
	done := make(chan dialed, 1)
	go func() {
		c, err := Dial(ctx, addr, ClientConfig{JobKey: testJobKey, RetryMin: time.Millisecond, RetryMax: 10 * time.Millisecond})
		done <- dialed{c, err}
	}()
	time.Sleep(30 * time.Millisecond) // let Dial fail a few times
	srv, err := Listen(ctx, addr, Config{JobKey: testJobKey})
	require.NoError(t, err)
	defer srv.Close()
	d := <-done
	require.NoError(t, d.err)
	defer d.c.Close()
	require.NoError(t, d.c.Set(ctx, "up", nil))
}

func TestDialGivesUpAtDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, err = Dial(testCtx(t, short), addr, ClientConfig{JobKey: testJobKey})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), addr)
}

func TestMaxConns(t *testing.T) {
	srv := startServer(t, Config{MaxConns: 2})
	dial(t, srv)
	dial(t, srv)
	_, err := Dial(testCtx(t, long), srv.Addr().String(), ClientConfig{JobKey: testJobKey})
	require.ErrorIs(t, err, ErrLimit)
	require.Contains(t, err.Error(), "MaxConns 2")
	require.Equal(t, uint64(1), srv.Stats().OverLimit)
}

func TestRequestLargerThanServerFrame(t *testing.T) {
	lim := Limits{MaxValueBytes: 1000}
	srv := startServer(t, Config{Limits: lim, MaxFrameBytes: 8192})
	c := dial(t, srv)
	ctx := testCtx(t, long)
	err := c.Set(ctx, "big", make([]byte, 9000))
	require.ErrorIs(t, err, ErrLimit)
	require.Contains(t, err.Error(), "MaxFrameBytes 8192")
	err = c.Set(ctx, "big", make([]byte, 1001))
	require.ErrorIs(t, err, ErrLimit)
	require.Contains(t, err.Error(), "MaxValueBytes 1000")
	require.NoError(t, c.Set(ctx, "ok", make([]byte, 1000)), "the connection survives")
}

func TestConfigValidation(t *testing.T) {
	ctx := t.Context()
	_, err := Listen(ctx, "127.0.0.1:0", Config{})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = Listen(ctx, "127.0.0.1:0", Config{JobKey: testJobKey, MaxFrameBytes: 1 << 20})
	require.ErrorIs(t, err, ErrInvalid, "2 MiB of compare-and-set does not fit 1 MiB frames")
}

func TestOneClientConcurrentCalls(t *testing.T) {
	srv := startServer(t, Config{})
	c := dial(t, srv)
	ctx := testCtx(t, long)
	// A Get blocked on the shared connection does not block other calls.
	got := make(chan []byte, 1)
	go func() { v, _ := c.Get(ctx, "later"); got <- v }()
	waitPending(t, fixture{pending: srv.tab.pendingWaits}, 1)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			key := fmt.Sprint("k", i)
			if err := c.Set(ctx, key, []byte(key)); err != nil {
				t.Error(err)
				return
			}
			v, err := c.Get(ctx, key)
			if err != nil || string(v) != key {
				t.Errorf("Get(%s) = %q, %v", key, v, err)
			}
		})
	}
	wg.Wait()
	require.NoError(t, c.Set(ctx, "later", []byte("now")))
	require.Equal(t, []byte("now"), <-got)
}

func TestClientGoneCancelsServerWaits(t *testing.T) {
	srv := startServer(t, Config{})
	f := fixture{pending: srv.tab.pendingWaits}
	c, err := Dial(testCtx(t, long), srv.Addr().String(), ClientConfig{JobKey: testJobKey})
	require.NoError(t, err)
	errs := make(chan error, 3)
	for i := range 3 {
		go func() { errs <- c.Wait(t.Context(), fmt.Sprint("never", i)) }()
	}
	waitPending(t, f, 3)
	require.NoError(t, c.Close())
	for range 3 {
		require.ErrorIs(t, <-errs, ErrClosed)
	}
	waitPending(t, f, 0)
}

func TestLocalSharesData(t *testing.T) {
	srv := startServer(t, Config{})
	c, local, ctx := dial(t, srv), srv.Local(), testCtx(t, long)
	require.NoError(t, local.Set(ctx, "from-local", []byte("1")))
	v, err := c.Get(ctx, "from-local")
	require.NoError(t, err)
	require.Equal(t, []byte("1"), v)
	require.NoError(t, local.Close())
	require.NoError(t, c.Set(ctx, "still-open", nil), "closing Local leaves the server running")
}

func TestServerStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	srv, err := Listen(ctx, "127.0.0.1:0", Config{JobKey: testJobKey})
	require.NoError(t, err)
	c := dial(t, srv)
	cancel()
	_, err = c.Get(testCtx(t, long), "never")
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, srv.Close())
}

// TestCancelGraceWithoutAnswer checks that a wait whose server never
// answers still ends, shortly after its deadline, naming all its keys.
func TestCancelGraceWithoutAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go silentServer(ln)
	ctx := testCtx(t, long)
	c, err := Dial(ctx, ln.Addr().String(), ClientConfig{JobKey: testJobKey, CancelGrace: 10 * time.Millisecond})
	require.NoError(t, err)
	defer c.Close()
	err = c.Wait(testCtx(t, short), "a", "b")
	var mk *MissingKeysError
	require.ErrorAs(t, err, &mk)
	require.Equal(t, []string{"a", "b"}, mk.Keys)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// silentServer runs the handshake on one connection and then reads
// requests without ever answering them.
func silentServer(ln net.Listener) {
	conn, err := ln.Accept()
	if err != nil {
		return
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	sess, err := serverHandshake(conn, br, testJobKey, time.Now().Add(long))
	if err != nil {
		return
	}
	_ = conn.SetDeadline(time.Time{})
	if _, err := conn.Write(appendWelcome(nil, sess, 1<<20)); err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, br)
}

func TestNoGoroutineLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	func() {
		srv, err := Listen(t.Context(), "127.0.0.1:0", Config{JobKey: testJobKey})
		require.NoError(t, err)
		ctx := testCtx(t, long)
		var clients []*Client
		errs := make(chan error, 8)
		for i := range 8 {
			c, err := Dial(ctx, srv.Addr().String(), ClientConfig{JobKey: testJobKey})
			require.NoError(t, err)
			clients = append(clients, c)
			go func() { errs <- c.Wait(ctx, fmt.Sprint("never", i)) }()
		}
		waitPending(t, fixture{pending: srv.tab.pendingWaits}, 8)
		require.NoError(t, clients[0].Close()) // one client leaves first
		require.NoError(t, srv.Close())
		for range 8 {
			require.ErrorIs(t, <-errs, ErrClosed)
		}
		for _, c := range clients {
			require.NoError(t, c.Close())
		}
	}()
	if !waitFor(func() bool { return runtime.NumGoroutine() <= base }) {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d before, %d after:\n%s", base, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
}

// waitFor polls cond until it holds or long passes.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(long); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

func TestServeEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	srv, err := Listen(ctx, "127.0.0.1:0", Config{JobKey: testJobKey})
	if err == nil {
		require.NoError(t, srv.Close(), "a server whose ctx already ended closes itself")
	}
}

// TestServerSideTimeout checks the server's own copy of a wait's deadline,
// which ends the wait even if the client's cancel never comes.
func TestServerSideTimeout(t *testing.T) {
	srv := startServer(t, Config{})
	require.NoError(t, srv.Local().Set(t.Context(), "b", nil))
	r := dialRaw(t, srv)
	r.send(&request{op: opWait, id: 3, timeoutMs: 1, items: [][]byte{[]byte("a"), []byte("b"), []byte("c")}})
	resp, err := r.recv()
	require.NoError(t, err)
	require.Equal(t, statusMissing, resp.status)
	require.Equal(t, uint64(3), resp.id)
	err = responseError(resp, context.DeadlineExceeded)
	var mk *MissingKeysError
	require.ErrorAs(t, err, &mk)
	require.Equal(t, []string{"a", "c"}, mk.Keys)
}
