package udpio

import (
	"encoding/binary"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pingReadEach runs rounds of one datagram each from b to a, read by
// a.ReadEach in batches of 4: each datagram's handler asks for the next,
// which come, in turn, while the handler still runs (queued before the
// reader waits again) and later from another goroutine (while the reader
// waits). A wake-up lost after a short batch leaves the reader waiting with
// a datagram queued: the read deadline then ends the test with an error.
func pingReadEach(t *testing.T, rounds int, inHandler func(i int) bool) *Socket {
	a := listen(t, loopback4, Config{})
	b := listen(t, loopback4, Config{})
	require.NoError(t, a.SetReadDeadline(time.Now().Add(20*time.Second)))
	send := func(i int) error {
		buf := binary.BigEndian.AppendUint32(nil, uint32(i))
		_, err := b.WriteBatch([]Message{{Buf: buf, Addr: a.LocalAddr()}})
		return err
	}
	later := make(chan int, 1)
	sendErr := make(chan error, 1)
	go func() {
		for i := range later {
			time.Sleep(time.Millisecond)
			if err := send(i); err != nil {
				sendErr <- err
				return
			}
		}
	}()
	defer close(later)
	ms := make([]Message, 4)
	for i := range ms {
		ms[i].Buf = make([]byte, 64)
	}
	next := 0
	var bad error
	require.NoError(t, send(0))
	err := a.ReadEach(ms, func(n int) bool {
		for _, m := range ms[:n] {
			got := int(binary.BigEndian.Uint32(m.Buf[:m.N]))
			if got != next || m.Addr != b.LocalAddr() {
				bad = errors.New("datagram out of order or from elsewhere")
				return false
			}
			next++
		}
		if next == rounds {
			return false
		}
		if inHandler(next) {
			if bad = send(next); bad != nil {
				return false
			}
			runtime.Gosched() // let the poller see it before the reader waits
		} else {
			later <- next
		}
		return true
	})
	require.NoError(t, err, "after %d of %d datagrams", next, rounds)
	require.NoError(t, bad)
	require.Equal(t, rounds, next)
	select {
	case err := <-sendErr:
		require.NoError(t, err)
	default:
	}
	return a
}

func TestReadEachLosesNoWakeUp(t *testing.T) {
	_ = pingReadEach(t, 300, func(i int) bool { return i%2 == 0 })
}

func TestReadEachBadArgs(t *testing.T) {
	a := listen(t, loopback4, Config{})
	require.ErrorIs(t, a.ReadEach(nil, func(int) bool { return true }), ErrConfig)
	a.Close()
	ms := []Message{{Buf: make([]byte, 64)}}
	require.ErrorIs(t, a.ReadEach(ms, func(int) bool { return true }), net.ErrClosed)
}
