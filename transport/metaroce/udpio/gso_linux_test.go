package udpio

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

// flatten returns the datagrams a batch stands for, in order.
func flatten(ms []Message) [][]byte {
	var ds [][]byte
	for _, m := range ms {
		buf := append([]byte{}, m.Buf...)
		for _, g := range m.Gather {
			buf = append(buf, g...)
		}
		SplitSegments(Message{Buf: buf, N: len(buf), Segment: m.Segment}, func(seg []byte) {
			ds = append(ds, append([]byte{}, seg...))
		})
	}
	return ds
}

// mixedTrainBatch is a batch of single datagrams and trains of the sizes of
// a 9000-byte, a 1500-byte MTU and tiny segments, to.
func mixedTrainBatch(to netip.AddrPort) []Message {
	return []Message{
		{Buf: pattern(1, 300), Addr: to},
		{Buf: pattern(2, 7*8972), Addr: to, Segment: 8972},
		{Buf: pattern(3, 1), Addr: to},
		{Buf: pattern(4, 44*1452+100), Addr: to, Segment: 1452},
		{Buf: pattern(5, MaxPayload), Addr: to},
		{Buf: pattern(6, 64), Addr: to, Segment: 1},
		{Buf: pattern(7, 2000), Addr: to, Segment: 2000}, // a train of one
	}
}

// TestTrainsEveryWay sends trains with and without GSO to receivers with
// and without GRO: every datagram must arrive, in order, whether as part of
// a GRO train or alone.
func TestTrainsEveryWay(t *testing.T) {
	for _, gso := range []bool{true, false} {
		for _, gro := range []bool{true, false} {
			t.Run(fmt.Sprintf("gso=%v/gro=%v", gso, gro), func(t *testing.T) {
				rx := listen(t, loopback4, Config{DisableGRO: !gro})
				tx := listen(t, loopback4, Config{DisableGSO: !gso})
				ms := mixedTrainBatch(rx.LocalAddr())
				n, err := tx.WriteBatch(ms)
				require.NoError(t, err)
				require.Equal(t, len(ms), n)
				want := flatten(ms)
				got := readDatagrams(t, rx, len(want))
				trains := 0
				for i := range want {
					require.Equal(t, want[i], got[i].data, "datagram %d", i)
					if got[i].train > 0 {
						trains++
					}
				}
				t.Logf("%d datagrams, %d of them in GRO trains", len(want), trains)
				if !gso || !gro {
					require.Zero(t, trains, "no trains without GSO on the sender and GRO on the receiver")
				}
			})
		}
	}
}

// TestGSOTrainArrivesAsGROTrain: on loopback, a UDP_SEGMENT send reaches a
// UDP_GRO socket as one train, with the segment size in the control data.
func TestGSOTrainArrivesAsGROTrain(t *testing.T) {
	rx := listen(t, loopback4, Config{})
	tx := listen(t, loopback4, Config{})
	if !rx.Caps().GRO || !tx.Caps().GSO {
		t.Skipf("kernel without GSO/GRO: rx %+v tx %+v", rx.Caps(), tx.Caps())
	}
	train := pattern(1, 39*1400+500)
	_, err := tx.WriteBatch([]Message{{Buf: train, Addr: rx.LocalAddr(), Segment: 1400}})
	require.NoError(t, err)
	ms := []Message{{Buf: make([]byte, ReadBufferSize)}, {Buf: make([]byte, ReadBufferSize)}}
	n, err := rx.ReadBatch(ms)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 1400, ms[0].Segment)
	require.Equal(t, train, ms[0].Buf[:ms[0].N])
	require.Equal(t, 40, (&Message{Buf: ms[0].Buf[:ms[0].N], Segment: ms[0].Segment}).Segments())
}

// TestTrainWithBatchOfOne cuts a train without GSO into more entries than
// the batch holds: it takes one sendmmsg per datagram.
func TestTrainWithBatchOfOne(t *testing.T) {
	rx := listen(t, loopback4, Config{})
	tx := listen(t, loopback4, Config{BatchSize: 1, DisableGSO: true})
	ms := mixedTrainBatch(rx.LocalAddr())
	n, err := tx.WriteBatch(ms)
	require.NoError(t, err)
	require.Equal(t, len(ms), n)
	want := flatten(ms)
	got := readDatagrams(t, rx, len(want))
	for i := range want {
		require.Equal(t, want[i], got[i].data, "datagram %d", i)
	}
}

// TestGSOFallbackOnEIO simulates a route whose device cannot segment: the
// first GSO send fails with EIO, the socket turns GSO off and sends the
// trains datagram by datagram, and WriteBatch still sends everything.
func TestGSOFallbackOnEIO(t *testing.T) {
	for _, lead := range []int{0, 2} {
		t.Run(fmt.Sprintf("train after %d datagrams", lead), func(t *testing.T) {
			rx := listen(t, loopback4, Config{})
			tx := listen(t, loopback4, Config{})
			if !tx.Caps().GSO {
				t.Skip("kernel without GSO")
			}
			tx.failGSOWithEIO()
			to := rx.LocalAddr()
			var ms []Message
			for i := range lead {
				ms = append(ms, Message{Buf: pattern(10+i, 100), Addr: to})
			}
			ms = append(ms,
				Message{Buf: pattern(1, 5*1000), Addr: to, Segment: 1000},
				Message{Buf: pattern(2, 77), Addr: to},
				Message{Buf: pattern(3, 3*2000-1), Addr: to, Segment: 2000})
			n, err := tx.WriteBatch(ms)
			require.NoError(t, err)
			require.Equal(t, len(ms), n)
			require.False(t, tx.Caps().GSO, "GSO stays off after EIO")
			want := flatten(ms)
			got := readDatagrams(t, rx, len(want))
			for i := range want {
				require.Equal(t, want[i], got[i].data, "datagram %d", i)
				require.Zero(t, got[i].train, "sent one by one, so no GRO train")
			}
			// Later batches go straight to single datagrams.
			n, err = tx.WriteBatch(ms[lead : lead+1])
			require.NoError(t, err)
			require.Equal(t, 1, n)
			require.Len(t, readDatagrams(t, rx, 5), 5)
		})
	}
}

// TestLongTrain writes trains beyond one GSO send's limits: 200 segments,
// and 64 segments of 1452 bytes (92928 bytes); both go as several sends.
func TestLongTrain(t *testing.T) {
	for _, gso := range []bool{true, false} {
		t.Run(fmt.Sprintf("gso=%v", gso), func(t *testing.T) {
			rx := listen(t, loopback4, Config{})
			tx := listen(t, loopback4, Config{DisableGSO: !gso})
			ms := []Message{
				{Buf: pattern(1, 200*100+7), Addr: rx.LocalAddr(), Segment: 100},
				{Buf: pattern(2, 64*1452), Addr: rx.LocalAddr(), Segment: 1452},
			}
			n, err := tx.WriteBatch(ms)
			require.NoError(t, err)
			require.Equal(t, 2, n)
			want := flatten(ms)
			got := readDatagrams(t, rx, len(want))
			for i := range want {
				require.Equal(t, want[i], got[i].data, "datagram %d", i)
			}
		})
	}
}

// A train gathered from pieces (each datagram a header, a payload and a
// tail in three places, as MetaRoCE's DATA) arrives as the datagrams it
// stands for, cut every Segment bytes wherever the slices end: with GSO,
// without it, after a GSO send failed with EIO (sent datagram by
// datagram, the cuts falling inside slices), and beyond one GSO send's
// limits. Segments counts the gathered bytes.
func TestGatherTrain(t *testing.T) {
	const seg, n = 8972, 9
	whole := pattern(5, seg*n-100) // the last datagram shorter
	// The train's slices: each datagram's first 76 bytes, then its next
	// 8892, then the rest, as three slices (the last one's two).
	var slices [][]byte
	for off := 0; off < len(whole); off += seg {
		d := whole[off:min(off+seg, len(whole))]
		slices = append(slices, d[:76], d[76:min(len(d), 8968)])
		if len(d) > 8968 {
			slices = append(slices, d[8968:])
		}
	}
	for _, mode := range []string{"gso", "no gso", "eio"} {
		t.Run(mode, func(t *testing.T) {
			rx := listen(t, loopback4, Config{})
			tx := listen(t, loopback4, Config{DisableGSO: mode == "no gso"})
			if mode == "eio" {
				if !tx.Caps().GSO {
					t.Skip("kernel without GSO")
				}
				tx.failGSOWithEIO()
			}
			to := rx.LocalAddr()
			ms := []Message{
				{Buf: pattern(1, 300), Addr: to},
				{Buf: slices[0], Gather: slices[1:], Segment: seg, Addr: to},
				{Buf: pattern(2, 40), Gather: [][]byte{pattern(3, 20), nil, pattern(4, 40)}, Segment: 50, Addr: to},
			}
			require.Equal(t, n, ms[1].Segments())
			require.Equal(t, 2, ms[2].Segments())
			k, err := tx.WriteBatch(ms)
			require.NoError(t, err)
			require.Equal(t, len(ms), k)
			want := flatten(ms)
			require.Len(t, want, 1+n+2)
			got := readDatagrams(t, rx, len(want))
			for i := range want {
				require.Equal(t, want[i], got[i].data, "datagram %d", i)
			}
			for i := 0; i < n; i++ {
				require.Equal(t, whole[i*seg:min((i+1)*seg, len(whole))], got[1+i].data, "datagram %d of the train", i)
			}
		})
	}
}
