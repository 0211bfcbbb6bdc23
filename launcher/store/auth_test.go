package store

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// rawClient is a hand-driven client past its handshake: tests send it
// frames a Client would never send.
type rawClient struct {
	t       *testing.T
	conn    net.Conn
	br      *bufio.Reader
	in, out *sealer
}

func dialRaw(t *testing.T, srv *Server) *rawClient {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	br := bufio.NewReader(conn)
	sess, _, err := clientHandshake(conn, br, testJobKey, time.Now().Add(long))
	require.NoError(t, err)
	require.NoError(t, conn.SetDeadline(time.Now().Add(long)))
	return &rawClient{t: t, conn: conn, br: br, in: newSealer(sess.s2c), out: newSealer(sess.c2s)}
}

// frame returns req as the next tagged frame.
func (r *rawClient) frame(req *request) []byte {
	b, err := appendRequest(nil, req)
	require.NoError(r.t, err)
	b, err = r.out.sealFrame(b, 0)
	require.NoError(r.t, err)
	return b
}

func (r *rawClient) send(req *request) { r.write(r.frame(req)) }

func (r *rawClient) write(b []byte) {
	_, err := r.conn.Write(b)
	require.NoError(r.t, err)
}

// recv returns the next response, its tag checked.
func (r *rawClient) recv() (response, error) {
	body, err := readFrame(r.br, DefaultMaxFrameBytes+tagBytes)
	if err != nil {
		return response{}, err
	}
	if body, err = r.in.open(body); err != nil {
		return response{}, err
	}
	return parseResponse(body)
}

// closed reports whether the server closed the connection.
func (r *rawClient) closed() bool {
	_, err := r.br.ReadByte()
	return err != nil
}

// A frame with a wrong tag, and a frame replayed, are refused, counted
// and end their connection; nothing they asked is applied, and the other
// clients go on.
func TestForgedAndReplayedFramesRefused(t *testing.T) {
	srv := startServer(t, Config{})
	c := dial(t, srv)
	ctx := testCtx(t, long)

	r := dialRaw(t, srv)
	add := r.frame(&request{op: opAdd, id: 1, items: [][]byte{[]byte("n"), encodeInt64(1)}})
	r.write(add)
	resp, err := r.recv()
	require.NoError(t, err)
	require.Equal(t, statusOK, resp.status)
	r.write(add) // the same bytes again: its sequence number is stale
	resp, err = r.recv()
	require.NoError(t, err, "the refusal itself is tagged")
	require.Equal(t, statusProtocol, resp.status)
	require.Contains(t, string(resp.items[0]), "wrong tag")
	require.True(t, r.closed())

	r = dialRaw(t, srv)
	forged := r.frame(&request{op: opAdd, id: 1, items: [][]byte{[]byte("n"), encodeInt64(1000)}})
	forged[len(forged)-20]++ // the delta, under the tag
	r.write(forged)
	resp, err = r.recv()
	require.NoError(t, err)
	require.Equal(t, statusProtocol, resp.status)
	require.True(t, r.closed())

	r = dialRaw(t, srv)
	untagged, err := appendRequest(nil, &request{op: opSet, id: 1, items: [][]byte{[]byte("n"), []byte("x")}})
	require.NoError(t, err)
	r.write(untagged)
	_, _ = r.recv()
	require.True(t, r.closed())

	n, err := c.Add(ctx, "n", 0)
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "only the first, genuine Add was applied")
	require.Equal(t, uint64(3), srv.Stats().BadTags)
	require.Equal(t, uint64(4), srv.Stats().Authenticated)
}

// A server that does not hold the job key cannot pass for the store: the
// client refuses it, though the server accepted the client's proof
// without checking it.
func TestServerMustProveKey(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		nonce := make([]byte, 16)
		_, _ = conn.Write(appendChallenge(nil, nonce))
		if _, err := readFrame(br, authBytes); err != nil {
			return
		}
		guess := session{s2c: mustKey("an-impostor-guessing-0").Derive("x")}
		_, _ = conn.Write(appendWelcome(nil, guess, 1<<20))
		_, _ = br.ReadByte()
	}()
	_, err = Dial(testCtx(t, long), ln.Addr().String(), ClientConfig{JobKey: testJobKey})
	require.ErrorIs(t, err, ErrBadJobKey)
	require.Contains(t, err.Error(), "the server did not prove this job's key")
}

// Garbage and thousands of connections at the store, during a job: the
// store stays up, its clients' calls all succeed with exact results, a
// new client still gets in, and the server's goroutines come back down.
func TestFloodAndGarbage(t *testing.T) {
	srv := startServer(t, Config{MaxHandshakes: 16})
	ctx := testCtx(t, long)
	base := runtime.NumGoroutine()
	const workers, adds = 4, 200
	clients := make([]*Client, workers)
	for i := range clients {
		clients[i] = dial(t, srv)
	}

	stop := make(chan struct{})
	var flooded atomic.Int64
	var fw sync.WaitGroup
	for g := range 4 {
		fw.Go(func() { flood(srv.Addr().String(), g, stop, &flooded) })
	}

	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			for range adds {
				if _, err := c.Add(ctx, "total", 1); err != nil {
					t.Errorf("worker %d: %v", i, err)
					return
				}
			}
		})
	}
	// A rank arriving in the middle of the flood still gets in.
	for flooded.Load() < 500 {
		time.Sleep(time.Millisecond)
	}
	late, err := Dial(ctx, srv.Addr().String(), ClientConfig{JobKey: testJobKey, RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond})
	require.NoError(t, err)
	defer late.Close()
	require.NoError(t, late.Set(ctx, "late", []byte("in")))
	wg.Wait()
	for flooded.Load() < 2000 {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	fw.Wait()

	n, err := late.Add(ctx, "total", 0)
	require.NoError(t, err)
	require.Equal(t, int64(workers*adds), n)
	st := srv.Stats()
	t.Logf("%d flood connections; server stats %+v", flooded.Load(), st)
	require.GreaterOrEqual(t, st.Accepted, uint64(2000))
	require.Equal(t, uint64(workers+1), st.Authenticated-st.OverLimit, "no flood connection got in")
	require.Greater(t, st.BadFrames+st.Evicted+st.RefusedKey, uint64(0))
	// The flood's connections are all gone again: no goroutine is left
	// for them (the clients' own remain).
	require.True(t, waitFor(func() bool { return runtime.NumGoroutine() <= base+2*(workers+1)+4 }),
		"goroutines: %d at the start, %d now", base, runtime.NumGoroutine())
}

// flood opens connections to addr until stop, each doing one of: nothing
// (closed at once), random bytes, a huge frame length, a handshake with a
// wrong proof, or staying silent until the server closes it. It counts
// the connections in n.
func flood(addr string, seed int, stop chan struct{}, n *atomic.Int64) {
	garbage := make([]byte, 512)
	for i := seed; ; i += 4 {
		select {
		case <-stop:
			return
		default:
		}
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			continue
		}
		n.Add(1)
		_ = conn.SetDeadline(time.Now().Add(50 * time.Millisecond))
		switch i % 5 {
		case 1:
			_, _ = rand.Read(garbage)
			_, _ = conn.Write(garbage)
		case 2:
			_, _ = conn.Write(binary.BigEndian.AppendUint32(nil, 1<<31))
		case 3:
			_, _ = conn.Write(appendAuth(nil, make([]byte, 16), make([]byte, 32)))
		case 4:
			var b [1]byte
			_, _ = conn.Read(b[:]) // leaves it open until the deadline
		}
		_ = conn.Close()
	}
}

// ExampleServer_Stats shows the counters after a client without the key
// tried the store.
func ExampleServer_Stats() {
	ctx := context.Background()
	key, _ := GenerateJobKey()
	srv, err := Listen(ctx, "127.0.0.1:0", Config{JobKey: key})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	other, _ := GenerateJobKey()
	_, err = Dial(ctx, srv.Addr().String(), ClientConfig{JobKey: other})
	fmt.Println(err != nil)
	st := srv.Stats()
	fmt.Println(st.Accepted, st.Authenticated, st.RefusedKey)
	// Output:
	// true
	// 1 0 1
}

// A flood of connections from one host (127.0.0.2) closes only its own
// connections in their handshake, never another host's (127.0.0.1).
func TestFloodEvictsItsOwnHost(t *testing.T) {
	srv := startServer(t, Config{MaxHandshakes: 4, MaxHandshakesPerHost: 2})
	ours := openAt(t, srv, "127.0.0.1")
	br := bufio.NewReader(ours)
	body, err := readFrame(br, DefaultMaxFrameBytes)
	require.NoError(t, err)
	serverNonce, err := parseChallenge(body) // admitted, in its handshake
	require.NoError(t, err)
	for range 10 {
		c := openAt(t, srv, "127.0.0.2")
		_, err := readFrame(bufio.NewReader(c), DefaultMaxFrameBytes)
		require.NoError(t, err) // admitted; it stays silent
	}
	require.Equal(t, uint64(8), srv.Stats().Evicted, "10 from one host, 2 at a time")

	nonce := make([]byte, 16)
	sess := newSession(testJobKey, nonce, serverNonce)
	proof := jobkey.Tag(sess.c2s, proofLabel)
	_, err = ours.Write(appendAuth(nil, nonce, proof[:]))
	require.NoError(t, err)
	body, err = readFrame(br, maxWelcomeBytes)
	require.NoError(t, err, "the other host's handshake survived the flood")
	resp, err := parseResponse(body)
	require.NoError(t, err)
	require.Equal(t, statusOK, resp.status)
}

// openAt connects to srv from the loopback address local.
func openAt(t *testing.T, srv *Server, local string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: long}
	c, err := d.Dial("tcp", srv.Addr().String())
	require.NoError(t, err)
	require.NoError(t, c.SetDeadline(time.Now().Add(long)))
	t.Cleanup(func() { _ = c.Close() })
	return c
}
