package tcp

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// loopbackPair returns the two ends of a loopback TCP connection.
func loopbackPair(t *testing.T) (net.Conn, net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	b := <-accepted
	require.NotNil(t, b)
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return a, b
}

// TestRawIO moves messages below and above rawBytesMax through rawIO both
// ways, then checks the end of stream and the error after Close.
func TestRawIO(t *testing.T) {
	a, b := loopbackPair(t)
	ra, ok := newRawIO(a)
	require.True(t, ok)
	rb, ok := newRawIO(b)
	require.True(t, ok)
	for _, size := range []int{1, 100, rawBytesMax, rawBytesMax + 1, 3 << 20} {
		msg := bytes.Repeat([]byte{byte(size)}, size)
		done := make(chan error, 1)
		go func() {
			_, err := ra.Write(msg) // more than the socket buffer holds: waits for room
			done <- err
		}()
		got := make([]byte, size)
		_, err := io.ReadFull(rb, got)
		require.NoError(t, err, "size %d", size)
		require.NoError(t, <-done)
		require.Equal(t, msg, got, "size %d", size)
	}
	n, err := rb.Read(nil)
	require.NoError(t, err)
	require.Zero(t, n)

	require.NoError(t, a.Close())
	_, err = rb.Read(make([]byte, 8))
	require.ErrorIs(t, err, io.EOF)
	_, err = ra.Write([]byte{1})
	require.True(t, errors.Is(err, net.ErrClosed), "write after Close: %v", err)
}
