package tcp

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
)

// TestCancelledRequestReuse: a receive that Cancel failed is reused after
// Release (a collective's eager call cancels such receives every call),
// and a send that Cancel failed is not, since its data frame may still
// wait in the connection's queue naming it (reused, the old frame would
// be written with the new request's buffer). Many sends are cancelled at
// once so that some are caught before the writer takes their frame; the
// sends that completed anyway may be reused and are not checked.
func TestCancelledRequestReuse(t *testing.T) {
	eps := newTestWorld(t, 2, Config{})
	recv := eps[0].Recv(1, tag(1, 1), make([]byte, 8))
	recv.Cancel()
	_, err := recv.Wait(context.Background())
	require.ErrorIs(t, err, transport.ErrCancelled)
	recv.(transport.Releaser).Release()
	again := eps[0].Recv(1, tag(1, 2), make([]byte, 8))
	require.Same(t, recv, again, "a cancelled receive is reused")
	again.Cancel()

	sends := make([]transport.Request, 64)
	for i := range sends {
		sends[i] = eps[0].Send(1, tag(2, uint32(i)), make([]byte, 1024))
	}
	cancelled := map[transport.Request]bool{}
	for _, s := range sends {
		s.Cancel()
		if _, err := s.Wait(context.Background()); errors.Is(err, transport.ErrCancelled) {
			cancelled[s] = true
		}
		s.(transport.Releaser).Release()
	}
	if len(cancelled) == 0 {
		t.Skip("every send was written before its Cancel: nothing to check this run")
	}
	for range sends {
		r := eps[0].Recv(1, tag(3, 1), make([]byte, 8))
		require.False(t, cancelled[r], "a cancelled send was reused")
		defer r.Cancel()
	}
}
