package udpio

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Messages that gather slices after Buf arrive as one datagram each, in a
// batch mixed with plain messages; a gather of too many slices (more than
// MaxGather on a datagram, MaxTrainGather on a train) is refused.
func TestGatherWrite(t *testing.T) {
	rx := listen(t, loopback4, Config{})
	tx := listen(t, loopback4, Config{})
	to := rx.LocalAddr()
	whole := pattern(9, 40000)
	ms := []Message{
		{Buf: whole[:12], Gather: [][]byte{whole[12:39996], whole[39996:]}, Addr: to},
		{Buf: pattern(1, 100), Addr: to},
		{Buf: nil, Gather: [][]byte{whole[:5], nil, whole[5:9]}, Addr: to},
	}
	n, err := tx.WriteBatch(ms)
	require.NoError(t, err)
	require.Equal(t, len(ms), n)
	got := readDatagrams(t, rx, 3)
	require.Equal(t, whole, got[0].data)
	require.Equal(t, pattern(1, 100), got[1].data)
	require.Equal(t, whole[:9], got[2].data)

	_, err = tx.WriteBatch([]Message{{Buf: whole[:100], Segment: 10, Gather: make([][]byte, MaxTrainGather+1), Addr: to}})
	require.ErrorIs(t, err, errBadGather)
	_, err = tx.WriteBatch([]Message{{Buf: whole[:1], Gather: make([][]byte, MaxGather+1), Addr: to}})
	require.ErrorIs(t, err, errBadGather)
}
