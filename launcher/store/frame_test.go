package store

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// seedRequests are valid requests of every op.
func seedRequests() []*request {
	k, v := []byte("key"), []byte("value")
	return []*request{
		{op: opHello, id: 1},
		{op: opSet, id: 2, items: [][]byte{k, v}},
		{op: opGet, id: 3, timeoutMs: 500, items: [][]byte{k}},
		{op: opTryGet, id: 4, items: [][]byte{k}},
		{op: opAdd, id: 5, items: [][]byte{k, encodeInt64(-3)}},
		{op: opCAS, id: 6, items: casItems("key", nil, v)},
		{op: opCAS, id: 7, items: casItems("key", v, []byte{})},
		{op: opWait, id: 8, timeoutMs: 1, items: [][]byte{k, []byte("other")}},
		{op: opDelete, id: 9, items: [][]byte{k}},
		{op: opCancel, id: 3},
	}
}

func TestRequestRoundTrip(t *testing.T) {
	for _, want := range seedRequests() {
		frame, err := appendRequest(nil, want)
		require.NoError(t, err)
		body, err := readFrame(bytes.NewReader(frame), DefaultMaxFrameBytes)
		require.NoError(t, err)
		got, err := parseRequest(body)
		require.NoError(t, err)
		require.Equal(t, want.op, got.op)
		require.Equal(t, want.id, got.id)
		require.Equal(t, want.timeoutMs, got.timeoutMs)
		require.Len(t, got.items, len(want.items))
		for i := range want.items {
			require.True(t, bytes.Equal(want.items[i], got.items[i]), "item %d", i)
		}
		_, err = decodeArgs(got.op, got.items)
		require.NoError(t, err, "op %d", got.op)
	}
}

func TestParseRejects(t *testing.T) {
	good, err := appendRequest(nil, seedRequests()[1])
	require.NoError(t, err)
	body := good[frameLenBytes:]
	_, err = parseRequest(body[:len(body)-1])
	require.ErrorIs(t, err, ErrProtocol)
	_, err = parseRequest(append(bytes.Clone(body), 0))
	require.ErrorIs(t, err, ErrProtocol)
	bad := bytes.Clone(body)
	bad[1] = byte(opEnd)
	_, err = parseRequest(bad)
	require.ErrorIs(t, err, ErrProtocol)
	_, err = decodeArgs(opCAS, [][]byte{[]byte("k"), {0}, []byte("old"), nil})
	require.ErrorIs(t, err, ErrProtocol, "absent flag with an old value")
	_, err = decodeArgs(opCAS, [][]byte{[]byte("k"), {2}, nil, nil})
	require.ErrorIs(t, err, ErrProtocol)
	_, err = readFrame(bytes.NewReader([]byte{0, 0, 1, 0, 1}), 255)
	require.ErrorIs(t, err, ErrLimit)
	_, err = readFrame(bytes.NewReader([]byte{0, 0, 0, 20, 1}), 255)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

// FuzzParseRequest feeds arbitrary bytes to the server's side of the
// codec: a frame that parses must re-encode to the same bytes, and its
// arguments must decode or fail with an error, never panic.
func FuzzParseRequest(f *testing.F) {
	for _, r := range seedRequests() {
		frame, err := appendRequest(nil, r)
		require.NoError(f, err)
		f.Add(frame)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bytes.NewReader(data)
		for {
			body, err := readFrame(br, 1<<16)
			if err != nil {
				return
			}
			req, err := parseRequest(body)
			if err != nil {
				continue
			}
			again, err := appendRequest(nil, &req)
			require.NoError(t, err)
			require.Equal(t, body, again[frameLenBytes:])
			_, _ = decodeArgs(req.op, req.items)
		}
	})
}

// seedResponses are valid answers to every op, and errors.
func seedResponses() []struct {
	op   opCode
	resp *response
} {
	type pair = struct {
		op   opCode
		resp *response
	}
	return []pair{
		{opHello, &response{id: 1, items: [][]byte{encodeUint32(1 << 20)}}},
		{opSet, &response{id: 2}},
		{opGet, &response{id: 3, items: [][]byte{[]byte("v")}}},
		{opTryGet, &response{id: 4, items: [][]byte{encodeBool(false), nil}}},
		{opAdd, &response{id: 5, items: [][]byte{encodeInt64(42)}}},
		{opCAS, &response{id: 6, items: [][]byte{encodeBool(true), encodeBool(true), []byte("new")}}},
		{opWait, &response{id: 7, status: statusMissing, items: [][]byte{[]byte("a"), []byte("b")}}},
		{opDelete, &response{id: 8, items: [][]byte{encodeBool(true)}}},
		{opSet, errorResponse(9, ErrBadJobKey)},
		{opSet, errorResponse(0, ErrLimit)},
	}
}

// FuzzParseResponse feeds arbitrary bytes to the client's side of the
// codec, decoding the result as an answer to every op.
func FuzzParseResponse(f *testing.F) {
	for _, s := range seedResponses() {
		frame, err := appendResponse(nil, s.resp)
		require.NoError(f, err)
		f.Add(frame)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bytes.NewReader(data)
		for {
			body, err := readFrame(br, 1<<16)
			if err != nil {
				return
			}
			resp, err := parseResponse(body)
			if err != nil {
				continue
			}
			again, err := appendResponse(nil, &resp)
			require.NoError(t, err)
			require.Equal(t, body, again[frameLenBytes:])
			if resp.status != statusOK {
				require.Error(t, responseError(resp, nil))
				continue
			}
			for op := opHello; op < opEnd; op++ {
				_, _ = decodeResult(op, resp.items)
			}
		}
	})
}

// FuzzServerConn runs arbitrary bytes through a server connection past
// its handshake: tag check, parsing and dispatch against a store with small
// limits. The seeds are correctly tagged frames of every op, so mutations
// that keep the tags reach the dispatch; any input must be answered or
// refused, never panic or hang.
func FuzzServerConn(f *testing.F) {
	sess := newSession(testJobKey, make([]byte, 16), make([]byte, 16))
	client := newSealer(sess.c2s)
	var all []byte
	for _, r := range seedRequests() {
		frame, err := appendRequest(nil, r)
		require.NoError(f, err)
		frame, err = client.sealFrame(frame, 0)
		require.NoError(f, err)
		all = append(all, frame...)
	}
	f.Add(all)
	f.Add(all[:len(all)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Config{JobKey: testJobKey, Limits: Limits{MaxKeys: 8, MaxPendingWaits: 4}}.withDefaults()
		require.NoError(t, err)
		srv := &Server{cfg: cfg, tab: newTable(cfg.Limits), conns: map[*serverConn]struct{}{}}
		near, far := net.Pipe()
		go func() { _, _ = io.Copy(io.Discard, far) }()
		c := newServerConn(srv, near)
		c.in, c.out = newSealer(sess.c2s), newSealer(sess.s2c)
		br := bufio.NewReader(bytes.NewReader(data))
		for {
			req, err := c.readRequest(br)
			if err != nil {
				break // the server answers and closes the connection
			}
			c.handle(&req)
		}
		c.cancel()
		c.wg.Wait()
		_ = near.Close()
		_ = far.Close()
	})
}

// FuzzHandshake feeds arbitrary bytes to both sides of the handshake: as
// the client's answer to the server, and as the server's frames to the
// client. Neither may panic or hang, and no input passes for the key.
func FuzzHandshake(f *testing.F) {
	f.Add(appendAuth(nil, make([]byte, 16), make([]byte, 32)))
	f.Add(append(appendChallenge(nil, make([]byte, 16)), appendWelcome(nil, session{s2c: []byte("k")}, 1<<20)...))
	f.Add([]byte{0, 0, 0, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		near, far := net.Pipe()
		go func() { _, _ = io.Copy(io.Discard, far) }()
		defer near.Close()
		defer far.Close()
		deadline := time.Now().Add(time.Second)
		_, err := serverHandshake(near, bufio.NewReader(bytes.NewReader(data)), testJobKey, deadline)
		require.Error(t, err, "random bytes proved the key")
		_, _, err = clientHandshake(near, bufio.NewReader(bytes.NewReader(data)), testJobKey, deadline)
		require.Error(t, err, "random bytes proved the key")
		require.NotContains(t, err.Error(), "\n")
	})
}
