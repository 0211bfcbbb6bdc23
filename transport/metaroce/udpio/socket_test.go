package udpio

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// mixedSizes are datagram sizes from empty to the IPv4 maximum, including
// the payloads of 1500- and 9000-byte MTUs.
var mixedSizes = []int{0, 1, 7, 100, 1452, 1472, 1500, 4096, 8972, 9000, 16384, 32000, 65507}

func TestRoundTripMixedSizes(t *testing.T) {
	for _, cfg := range []struct {
		name string
		cfg  Config
	}{
		{"defaults", Config{}},
		{"batch of 3, no offloads", Config{BatchSize: 3, DisableGSO: true, DisableGRO: true, DisableECN: true}},
	} {
		t.Run(cfg.name, func(t *testing.T) {
			rx := listen(t, loopback4, cfg.cfg)
			tx := listen(t, loopback4, cfg.cfg)
			var ms []Message
			for round := range 3 {
				for i, size := range mixedSizes {
					id := round*len(mixedSizes) + i
					ms = append(ms, Message{Buf: pattern(id, size), Addr: rx.LocalAddr()})
				}
			}
			n, err := tx.WriteBatch(ms)
			require.NoError(t, err)
			require.Equal(t, len(ms), n)
			got := readDatagrams(t, rx, len(ms))
			for i, g := range got {
				require.Equal(t, ms[i].Buf, g.data, "datagram %d", i)
				require.Equal(t, tx.LocalAddr(), g.from)
				require.False(t, g.ce)
			}
		})
	}
}

func TestRoundTripIPv6(t *testing.T) {
	rx, err := Listen(netip.MustParseAddrPort("[::1]:0"), Config{})
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	defer rx.Close()
	tx := listen(t, netip.MustParseAddrPort("[::1]:0"), Config{})
	ms := []Message{
		{Buf: pattern(1, 1200), Addr: rx.LocalAddr()},
		{Buf: pattern(2, 60000), Addr: rx.LocalAddr()},
	}
	n, err := tx.WriteBatch(ms)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	got := readDatagrams(t, rx, 2)
	require.Equal(t, ms[0].Buf, got[0].data)
	require.Equal(t, ms[1].Buf, got[1].data)
	require.Equal(t, tx.LocalAddr(), got[0].from)
}

// TestDualStack sends from an IPv4 socket to a dual-stack one and back:
// the v4-mapped source must come back as a plain IPv4 address, and a plain
// IPv4 destination must work on the dual-stack socket.
func TestDualStack(t *testing.T) {
	ds, err := Listen(netip.MustParseAddrPort("[::]:0"), Config{})
	if err != nil {
		t.Skipf("no dual-stack socket: %v", err)
	}
	defer ds.Close()
	v4 := listen(t, loopback4, Config{})
	to := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), ds.LocalAddr().Port())
	_, err = v4.WriteBatch([]Message{{Buf: []byte("ping"), Addr: to}})
	require.NoError(t, err)
	got := readDatagrams(t, ds, 1)
	require.Equal(t, v4.LocalAddr(), got[0].from)
	_, err = ds.WriteBatch([]Message{{Buf: []byte("pong"), Addr: got[0].from}})
	require.NoError(t, err)
	back := readDatagrams(t, v4, 1)
	require.Equal(t, "pong", string(back[0].data))
}

func TestTruncatedDatagram(t *testing.T) {
	rx := listen(t, loopback4, Config{})
	tx := listen(t, loopback4, Config{})
	_, err := tx.WriteBatch([]Message{{Buf: pattern(5, 3000), Addr: rx.LocalAddr()}})
	require.NoError(t, err)
	ms := []Message{{Buf: make([]byte, 1000)}}
	require.NoError(t, rx.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, err := rx.ReadBatch(ms)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 1000, ms[0].N)
	require.Equal(t, pattern(5, 3000)[:1000], ms[0].Buf)
	if rx.Caps().Batch { // only the Linux socket can tell
		require.True(t, ms[0].Truncated)
	}
}

func TestCloseUnblocksReadBatch(t *testing.T) {
	s, err := Listen(loopback4, Config{})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := s.ReadBatch([]Message{{Buf: make([]byte, 100)}})
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the reader block (it also works if it has not yet)
	require.NoError(t, s.Close())
	select {
	case err := <-done:
		require.ErrorIs(t, err, net.ErrClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("ReadBatch still blocked 10 s after Close")
	}
	_, err = s.WriteBatch([]Message{{Buf: []byte("x"), Addr: s.LocalAddr()}})
	require.ErrorIs(t, err, net.ErrClosed)
	_, err = s.ReadBatch([]Message{{Buf: make([]byte, 10)}})
	require.ErrorIs(t, err, net.ErrClosed)
}

func TestReadDeadline(t *testing.T) {
	s := listen(t, loopback4, Config{})
	require.NoError(t, s.SetReadDeadline(time.Now().Add(10*time.Millisecond)))
	_, err := s.ReadBatch([]Message{{Buf: make([]byte, 10)}})
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
}

func TestEmptyBatches(t *testing.T) {
	s := listen(t, loopback4, Config{})
	n, err := s.ReadBatch(nil)
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = s.WriteBatch(nil)
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestWriteBatchBadMessages(t *testing.T) {
	rx := listen(t, loopback4, Config{})
	tx := listen(t, loopback4, Config{})
	good := Message{Buf: []byte("ok"), Addr: rx.LocalAddr()}
	tests := []struct {
		name string
		bad  Message
	}{
		{"invalid address", Message{Buf: []byte("x")}},
		{"negative segment", Message{Buf: []byte("xyz"), Addr: rx.LocalAddr(), Segment: -1}},
		{"segment over 16 bits", Message{Buf: make([]byte, 70000), Addr: rx.LocalAddr(), Segment: 66000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := tx.WriteBatch([]Message{good, good, tt.bad, good})
			require.Error(t, err)
			require.Equal(t, 2, n, "the messages before the bad one go")
			got := readDatagrams(t, rx, 2)
			require.Equal(t, "ok", string(got[1].data))
		})
	}
	t.Run("IPv6 destination on an IPv4 socket", func(t *testing.T) {
		n, err := tx.WriteBatch([]Message{{Buf: []byte("x"), Addr: netip.MustParseAddrPort("[::1]:9")}})
		require.Error(t, err)
		require.Zero(t, n)
	})
}

func TestWriteBatchLargerThanBatchSize(t *testing.T) {
	rx := listen(t, loopback4, Config{BatchSize: 4})
	tx := listen(t, loopback4, Config{BatchSize: 4})
	ms := make([]Message, 37)
	for i := range ms {
		ms[i] = Message{Buf: pattern(i, 100+i), Addr: rx.LocalAddr()}
	}
	n, err := tx.WriteBatch(ms)
	require.NoError(t, err)
	require.Equal(t, len(ms), n)
	got := readDatagrams(t, rx, len(ms))
	for i := range ms {
		require.Equal(t, ms[i].Buf, got[i].data)
	}
}

func TestListenAddressInUse(t *testing.T) {
	a := listen(t, loopback4, Config{})
	_, err := Listen(a.LocalAddr(), Config{})
	require.Error(t, err)
	require.False(t, errors.Is(err, ErrConfig))
}
