package udpio

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReceiveTimestamps: a datagram read from a socket with timestamps on
// carries the kernel's receive time, between its send and its read, and
// one with timestamps off carries none; a datagram that waits in the
// socket keeps its arrival time, not its read's.
func TestReceiveTimestamps(t *testing.T) {
	for _, off := range []bool{false, true} {
		rx := listen(t, loopback4, Config{DisableTimestamps: off})
		require.Equal(t, !off, rx.Caps().Timestamps)
		tx := listen(t, loopback4, Config{})
		sent := time.Now().UnixNano()
		_, err := tx.WriteBatch([]Message{{Buf: []byte("early"), Addr: rx.LocalAddr()}})
		require.NoError(t, err)
		time.Sleep(20 * time.Millisecond) // the datagram waits in the socket
		require.NoError(t, rx.SetReadDeadline(time.Now().Add(10*time.Second)))
		ms := []Message{{Buf: make([]byte, 100)}}
		n, err := rx.ReadBatch(ms)
		read := time.Now().UnixNano()
		require.NoError(t, err)
		require.Equal(t, 1, n)
		if off {
			require.Zero(t, ms[0].Received)
			continue
		}
		require.GreaterOrEqual(t, ms[0].Received, sent-int64(time.Millisecond), "stamped before it was sent")
		require.LessOrEqual(t, ms[0].Received, read)
		require.GreaterOrEqual(t, read-ms[0].Received, int64(10*time.Millisecond), "stamped at the read, not the arrival")
	}
}
