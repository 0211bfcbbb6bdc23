package udpio

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestSendsECT0 reads the ECN bits of what a Socket sends with a plain
// socket that asks for the TOS byte.
func TestSendsECT0(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		want byte
	}{
		{"ECN on", Config{}, ecnECT0},
		{"ECN off", Config{DisableECN: true}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plain, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(loopback4))
			require.NoError(t, err)
			defer plain.Close()
			raw, err := plain.SyscallConn()
			require.NoError(t, err)
			require.NoError(t, raw.Control(func(fd uintptr) {
				err = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1)
			}))
			require.NoError(t, err)
			tx := listen(t, loopback4, tt.cfg)
			require.Equal(t, tt.want == ecnECT0, tx.Caps().ECN)
			to := plain.LocalAddr().(*net.UDPAddr).AddrPort()
			_, err = tx.WriteBatch([]Message{{Buf: []byte("hello"), Addr: to}})
			require.NoError(t, err)
			require.NoError(t, plain.SetReadDeadline(time.Now().Add(10*time.Second)))
			buf, oob := make([]byte, 100), make([]byte, 100)
			_, oobn, _, _, err := plain.ReadMsgUDPAddrPort(buf, oob)
			require.NoError(t, err)
			require.Equal(t, tt.want, parseControl(oob[:oobn]).tos&3)
		})
	}
}

// TestReadsCE marks what the sender sends CE and checks that the receiver
// reports it, for single datagrams and GSO trains, over IPv4 and IPv6.
func TestReadsCE(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(addr, func(t *testing.T) {
			la := netip.MustParseAddrPort(addr)
			rx, err := Listen(la, Config{})
			if err != nil {
				t.Skipf("cannot listen on %s: %v", addr, err)
			}
			defer rx.Close()
			tx := listen(t, la, Config{})
			require.True(t, rx.Caps().ECN)
			to := rx.LocalAddr()
			batch := []Message{{Buf: []byte("one"), Addr: to}, {Buf: pattern(1, 4000), Addr: to, Segment: 1000}}

			_, err = tx.WriteBatch(batch)
			require.NoError(t, err)
			for _, g := range readDatagrams(t, rx, 5) {
				require.False(t, g.ce, "ECT(0) is not CE")
			}

			require.NoError(t, tx.setTOS(ecnCE))
			_, err = tx.WriteBatch(batch)
			require.NoError(t, err)
			for i, g := range readDatagrams(t, rx, 5) {
				require.True(t, g.ce, "datagram %d", i)
			}
		})
	}
}

func TestECNDisabledReportsNoCE(t *testing.T) {
	rx := listen(t, loopback4, Config{DisableECN: true})
	tx := listen(t, loopback4, Config{})
	require.False(t, rx.Caps().ECN)
	require.NoError(t, tx.setTOS(ecnCE))
	_, err := tx.WriteBatch([]Message{{Buf: []byte("x"), Addr: rx.LocalAddr()}})
	require.NoError(t, err)
	require.False(t, readDatagrams(t, rx, 1)[0].ce)
}
