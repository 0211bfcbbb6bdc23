package tcp

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
)

// A send completes once its frame is in the connection's write buffer;
// Close must flush that buffer before it closes the socket, or a message
// its sender saw sent is lost. Each round sends, waits for the send, and
// closes at once, when the writer has most likely not flushed yet; the
// peer must receive every message.
func TestCloseFlushesCompletedSends(t *testing.T) {
	rounds := 200
	if testing.Short() {
		rounds = 50
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 3, Op: 1}}
	msg := bytes.Repeat([]byte{7}, 100)
	for i := range rounds {
		eps, err := NewLocalWorld(ctx, 2, Config{})
		require.NoError(t, err)
		_, err = eps[1].Send(0, tag, msg).Wait(ctx)
		require.NoError(t, err)
		require.NoError(t, eps[1].Close())
		buf := make([]byte, len(msg))
		n, err := eps[0].Recv(1, tag, buf).Wait(ctx)
		require.NoError(t, eps[0].Close())
		require.NoError(t, err, "round %d: a message whose send completed before its sender closed", i)
		require.Equal(t, msg, buf[:n])
	}
}
