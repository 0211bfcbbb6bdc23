package udpio

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestDeviceBindsTheSocket(t *testing.T) {
	s, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"), Config{Device: "lo"})
	if err != nil && strings.Contains(err.Error(), "operation not permitted") {
		t.Skip("SO_BINDTODEVICE needs CAP_NET_RAW on this kernel:", err)
	}
	require.NoError(t, err)
	defer s.Close()
	var dev string
	var gerr error
	require.NoError(t, s.raw.Control(func(fd uintptr) {
		dev, gerr = unix.GetsockoptString(int(fd), unix.SOL_SOCKET, unix.SO_BINDTODEVICE)
	}))
	require.NoError(t, gerr)
	require.Equal(t, "lo", dev)

	_, err = Listen(netip.MustParseAddrPort("127.0.0.1:0"), Config{Device: "nosuchdev0"})
	require.ErrorContains(t, err, "nosuchdev0")
	_, err = Listen(netip.MustParseAddrPort("127.0.0.1:0"), Config{Device: "a-name-too-long-for-linux"})
	require.ErrorIs(t, err, ErrConfig)
}
