package udpio

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestClassPerDatagram sends one batch whose datagrams carry different
// DSCP classes (single datagrams, a gathered one and a GSO train), over
// IPv4 and IPv6, and checks that each arrives with its class and ECT(0),
// and that the batch took one sendmmsg, as without classes.
func TestClassPerDatagram(t *testing.T) {
	// The last case sends from a dual-stack socket to a plain IPv4
	// address: the class must ride in IP_TOS, not IPV6_TCLASS (which the
	// kernel's IPv4 path ignores).
	for _, tc := range []struct{ rx, tx string }{{"127.0.0.1:0", "127.0.0.1:0"}, {"[::1]:0", "[::1]:0"}, {"127.0.0.1:0", "[::]:0"}} {
		t.Run(tc.rx+" from "+tc.tx, func(t *testing.T) {
			rx, err := Listen(netip.MustParseAddrPort(tc.rx), Config{})
			if err != nil {
				t.Skipf("cannot listen on %s: %v", tc.rx, err)
			}
			defer rx.Close()
			tx := listen(t, netip.MustParseAddrPort(tc.tx), Config{})
			require.True(t, rx.Caps().ECN)
			calls := 0
			send := tx.wr.sendFn
			tx.wr.sendFn = func(fd uintptr) bool { calls++; return send(fd) }
			to := rx.LocalAddr()
			batch := []Message{
				{Buf: []byte("ack"), Addr: to, Class: 48},
				{Buf: []byte("data"), Addr: to},
				{Buf: []byte("nack"), Addr: to, Class: 46},
				{Buf: []byte("head"), Gather: [][]byte{[]byte("tail")}, Addr: to, Class: 10},
				{Buf: pattern(1, 3000), Addr: to, Segment: 1000, Class: 63},
			}
			n, err := tx.WriteBatch(batch)
			require.NoError(t, err)
			require.Equal(t, len(batch), n)
			require.Equal(t, 1, calls, "sendmmsg calls for one batch")
			want := map[string]uint8{"ack": 48, "data": 0, "nack": 46, "headtail": 10}
			ms := make([]Message, 8)
			for i := range ms {
				ms[i].Buf = make([]byte, ReadBufferSize)
			}
			got := 0
			require.NoError(t, rx.SetReadDeadline(time.Now().Add(10*time.Second)))
			for got < 7 {
				k, err := rx.ReadBatch(ms)
				require.NoError(t, err)
				for _, m := range ms[:k] {
					SplitSegments(m, func(seg []byte) {
						got++
						c, ok := want[string(seg)]
						if !ok {
							require.Len(t, seg, 1000, "a segment of the train")
							c = 63
						}
						require.Equal(t, c, m.Class, "class of %q", seg[:min(len(seg), 8)])
						require.False(t, m.CE)
					})
				}
			}
		})
	}
}

// TestGatherTrainsKeepsClasses: datagrams of different classes to one address
// are not packed into one train (a train has one IP header class).
func TestGatherTrainsKeepsClasses(t *testing.T) {
	to := netip.MustParseAddrPort("127.0.0.1:9")
	src := []Message{{Buf: []byte("aa"), Addr: to, Class: 48}, {Buf: []byte("bb"), Addr: to, Class: 48},
		{Buf: []byte("cc"), Addr: to}, {Buf: []byte("dd"), Addr: to}}
	out, _ := GatherTrains(nil, src, nil)
	require.Len(t, out, 2)
	require.Equal(t, []int{2, 2}, []int{out[0].Segments(), out[1].Segments()})
	require.Equal(t, []uint8{48, 0}, []uint8{out[0].Class, out[1].Class})
}
