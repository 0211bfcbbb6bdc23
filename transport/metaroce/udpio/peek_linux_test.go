package udpio

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Peek shows a datagram's first bytes and whole length without taking it;
// a scatter read then puts its parts where the reader chose, and one that
// is too small is marked truncated.
func TestPeekThenScatterRead(t *testing.T) {
	rx := listen(t, loopback4, Config{})
	tx := listen(t, loopback4, Config{})
	whole := pattern(3, 40000)
	short := pattern(4, 300)
	_, err := tx.WriteBatch([]Message{{Buf: whole, Addr: rx.LocalAddr()}, {Buf: short, Addr: rx.LocalAddr()}})
	require.NoError(t, err)
	require.NoError(t, rx.SetReadDeadline(time.Now().Add(10*time.Second)))

	head := make([]byte, 16)
	for range 2 { // peeking twice sees the same datagram
		m := Message{Buf: head}
		require.NoError(t, rx.Peek(&m))
		require.Equal(t, len(whole), m.N)
		require.Equal(t, tx.LocalAddr(), m.Addr)
		require.Equal(t, whole[:16], head)
	}
	mid, rest := make([]byte, 30000), make([]byte, 20000)
	ms := []Message{{Buf: head, Gather: [][]byte{mid, rest}}}
	n, err := rx.ReadBatch(ms)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, len(whole), ms[0].N)
	require.False(t, ms[0].Truncated)
	require.Equal(t, whole[16:30016], mid)
	require.Equal(t, whole[30016:], rest[:len(whole)-30016])

	// The next datagram, too long for the parts given: cut and marked.
	ms = []Message{{Buf: head, Gather: [][]byte{mid[:100]}}}
	n, err = rx.ReadBatch(ms)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 116, ms[0].N)
	require.True(t, ms[0].Truncated)
	require.Equal(t, short[16:116], mid[:100])

	_, err = rx.ReadBatch([]Message{{Buf: head, Gather: make([][]byte, MaxGather+1)}})
	require.ErrorIs(t, err, errBadGather)
}
