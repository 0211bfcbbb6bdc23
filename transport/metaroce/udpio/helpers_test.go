package udpio

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// loopback4 is 127.0.0.1 with port 0.
var loopback4 = netip.MustParseAddrPort("127.0.0.1:0")

// listen opens a socket that the test closes at its end.
func listen(t testing.TB, addr netip.AddrPort, cfg Config) *Socket {
	t.Helper()
	s, err := Listen(addr, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// pattern returns n bytes that depend on id and on each byte's position.
func pattern(id, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(id*131 + i*7 + i>>8)
	}
	return b
}

// received is one datagram as a reader saw it.
type received struct {
	data  []byte
	from  netip.AddrPort
	ce    bool
	train int // segment size of the GRO train it came in, 0 if alone
}

// readDatagrams reads until want datagrams (segments of trains counted one
// by one) have arrived, failing the test if they take over 10 s.
func readDatagrams(t testing.TB, s *Socket, want int) []received {
	t.Helper()
	require.NoError(t, s.SetReadDeadline(time.Now().Add(10*time.Second)))
	defer s.SetReadDeadline(time.Time{})
	ms := make([]Message, 16)
	for i := range ms {
		ms[i].Buf = make([]byte, ReadBufferSize)
	}
	var got []received
	for len(got) < want {
		n, err := s.ReadBatch(ms)
		require.NoError(t, err, "after %d of %d datagrams", len(got), want)
		for _, m := range ms[:n] {
			require.False(t, m.Truncated)
			SplitSegments(m, func(seg []byte) {
				got = append(got, received{append([]byte{}, seg...), m.Addr, m.CE, m.Segment})
			})
		}
	}
	require.Len(t, got, want, "more datagrams than sent")
	return got
}
