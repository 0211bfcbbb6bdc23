package tcp

import (
	"net"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport/transporttest"
)

// TestMultipathTCP builds a world with Config.MultipathTCP and checks that
// its connections really are MPTCP and carry messages.
func TestMultipathTCP(t *testing.T) {
	enabled, err := os.ReadFile("/proc/sys/net/mptcp/enabled")
	if err != nil || strings.TrimSpace(string(enabled)) != "1" {
		t.Skipf("kernel without MPTCP (/proc/sys/net/mptcp/enabled: %q, %v)", enabled, err)
	}
	eps := newTestWorld(t, 2, Config{MultipathTCP: true, ConnsPerPeer: 2})
	for _, c := range eps[0].peers[1].conns {
		tc, ok := c.nc.(*net.TCPConn)
		require.True(t, ok)
		mp, err := tc.MultipathTCP()
		require.NoError(t, err)
		if !mp {
			t.Skip("MPTCP enabled in the kernel but the connection fell back to TCP (sandbox or middlebox)")
		}
	}
	buf := make([]byte, 3<<20)
	s := eps[0].Send(1, tag(1, 0), transporttest.Pattern(len(buf), 5))
	_, err = eps[1].Recv(0, tag(1, 0), buf).Wait(waitCtx(t))
	require.NoError(t, err)
	require.NoError(t, transporttest.Verify(buf, 5))
	_, err = s.Wait(waitCtx(t))
	require.NoError(t, err)
}
