package mrtransport

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPortRangePassesAFirewall puts a firewall in each namespace of the
// jumbo pair that drops UDP to ports outside 50100-50199: ranks whose
// sockets bind that range connect and run AllReduces; ranks on ephemeral
// ports never connect.
func TestPortRangePassesAFirewall(t *testing.T) {
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("needs iptables")
	}
	p := newJumboPair(t)
	for _, ns := range jumboNS {
		p.run("ip", "netns", "exec", ns, "iptables", "-w", "-A", "INPUT", "-p", "udp", "!", "--dport", "50100:50199", "-j", "DROP")
	}
	r, err := ParsePortRange("50100-50199")
	require.NoError(t, err)
	eps := p.world(testCtx(t), Config{Paths: 4, PortRange: r})
	for _, ep := range eps {
		for _, a := range ep.Addr().Paths {
			require.True(t, a.Port() >= 50100 && a.Port() <= 50199, "port %d", a.Port())
		}
	}
	allReduceSum(t, newComms(t, eps), 1000)
	for _, ep := range eps {
		require.NoError(t, ep.Close())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = p.tryWorld(ctx, [2]Config{{Paths: 4}, {Paths: 4}})
	require.ErrorIs(t, err, context.DeadlineExceeded, "ranks on ephemeral ports connected through the firewall")
}
