//go:build linux

package shm_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
)

// TestReleaseTwiceKeepsOnce: a request released twice is kept for reuse
// once, so two later requests never share it (which would cross their
// results and buffers).
func TestReleaseTwiceKeepsOnce(t *testing.T) {
	eps := newTestWorld(t, 2, shm.Config{})
	ctx := waitCtx(t)
	big := payload(1, 64<<10) // above the inline size: a request, not a value
	r := eps[1].Recv(0, ltag(1), make([]byte, len(big)))
	_, err := eps[0].Send(1, ltag(1), big).Wait(ctx)
	require.NoError(t, err)
	_, err = r.Wait(ctx)
	require.NoError(t, err)
	transport.Release(r)
	transport.Release(r)
	bufs := [][]byte{make([]byte, len(big)), make([]byte, len(big))}
	a := eps[1].Recv(0, ltag(2), bufs[0])
	b := eps[1].Recv(0, ltag(3), bufs[1])
	require.NotSame(t, a, b, "one released request handed to two receives")
	for i := range bufs {
		_, err := eps[0].Send(1, ltag(uint32(i+2)), payload(i+2, len(big))).Wait(ctx)
		require.NoError(t, err)
	}
	for i, rq := range []transport.Request{a, b} {
		_, err := rq.Wait(ctx)
		require.NoError(t, err)
		require.True(t, bytes.Equal(bufs[i], payload(i+2, len(big))), "receive %d", i)
	}
}
