package mrtransport

import (
	"fmt"
	"net/netip"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDatagramForMTU(t *testing.T) {
	for _, c := range []struct {
		mtu  int
		v6   bool
		want int
	}{
		{1500, false, 1472}, {1500, true, 1452},
		{9000, false, 8972}, {9000, true, 8952},
		{65536, false, 65507}, {65536, true, 65488}, // loopback: the UDP limit on IPv4
		{1280, true, 1232}, // IPv6's minimum MTU
		{100, false, 256},  // below the core's smallest datagram
	} {
		require.Equal(t, c.want, DatagramForMTU(c.mtu, c.v6), "mtu %d v6 %v", c.mtu, c.v6)
	}
}

func TestParsePortRange(t *testing.T) {
	for in, want := range map[string]PortRange{
		"":            {},
		"50000-50999": {50000, 50999},
		"7":           {7, 7},
		"1-65535":     {1, 65535},
		" 10 - 20 ":   {10, 20},
	} {
		got, err := ParsePortRange(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"0-10", "10-5", "1-65536", "a-b", "-", "10-", "-10", "1-2-3", "99999", "+5"} {
		_, err := ParsePortRange(bad)
		require.Error(t, err, bad)
	}
	require.Equal(t, "50000-50999", PortRange{50000, 50999}.String())
	require.Equal(t, 1000, PortRange{50000, 50999}.Len())
}

func TestParseInterfaces(t *testing.T) {
	got, err := ParseInterfaces(" eth1, eth2 ,10.0.0.1,fe80::1")
	require.NoError(t, err)
	require.Equal(t, []string{"eth1", "eth2", "10.0.0.1", "fe80::1"}, got)
	got, err = ParseInterfaces("")
	require.NoError(t, err)
	require.Nil(t, got)
	for _, bad := range []string{"eth1,,eth2", "a/b", "a-name-too-long-for-linux", "eth 1", ","} {
		_, err := ParseInterfaces(bad)
		require.Error(t, err, bad)
	}
}

func FuzzParsePortRange(f *testing.F) {
	for _, s := range []string{"", "50000-50999", "7", "0-1", "65535-1", " 1 - 2", "a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParsePortRange(s)
		if err != nil {
			return
		}
		if s != "" && (r.Lo == 0 || r.Lo > r.Hi || r.Len() < 1) {
			t.Fatalf("ParsePortRange(%q) = %v, not a valid range", s, r)
		}
		again, err := ParsePortRange(r.String())
		if err != nil || again != r {
			t.Fatalf("ParsePortRange(%q) = %v, whose String %q parses as %v, %v", s, r, r.String(), again, err)
		}
	})
}

func FuzzParseInterfaces(f *testing.F) {
	for _, s := range []string{"", "eth1,eth2", "10.0.0.1", "fe80::1%eth0", "a/b", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		list, err := ParseInterfaces(s)
		if err != nil {
			return
		}
		if len(list) > 256 {
			t.Fatalf("ParseInterfaces(%q): %d entries", s, len(list))
		}
		for _, e := range list {
			if checkInterface(e) != nil {
				t.Fatalf("ParseInterfaces(%q) accepted %q", s, e)
			}
		}
		cfg := Config{Size: 1, Interfaces: list}
		if _, err := cfg.withDefaults(); err != nil {
			t.Fatalf("ParseInterfaces(%q) = %q, which Config refuses: %v", s, list, err)
		}
	})
}

func TestPortRangeConfigErrors(t *testing.T) {
	ctx := testCtx(t)
	for _, cfg := range []Config{
		{Size: 1, Paths: 4, PortRange: PortRange{50000, 50002}},                                              // too small
		{Size: 1, PortRange: PortRange{50010, 50000}},                                                        // reversed
		{Size: 1, PortRange: PortRange{0, 50000}},                                                            // port 0
		{Size: 1, PortRange: PortRange{50000, 50999}, ListenAddr: netip.MustParseAddrPort("127.0.0.1:4000")}, // both
		{Size: 1, Interfaces: []string{"a/b"}},
	} {
		_, err := Listen(ctx, cfg)
		require.Error(t, err, "%+v", cfg)
		require.ErrorContains(t, err, "bad configuration")
	}
}

// TestPortRangeBindsWithin runs a world whose sockets bind within a small
// range, with a port of it taken by someone else: every socket is in the
// range, none on the taken port, and a rank finding the range full fails
// naming it.
func TestPortRangeBindsWithin(t *testing.T) {
	ctx := testCtx(t)
	r := freeRange(t, 10)
	busy, err := OpenUDP(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), r.Lo+3), 0)
	require.NoError(t, err)
	defer busy.Close()
	eps, err := NewLocalWorld(ctx, 2, Config{Paths: 4, PortRange: r})
	require.NoError(t, err)
	for _, ep := range eps {
		for _, a := range ep.Addr().Paths {
			require.True(t, a.Port() >= r.Lo && a.Port() <= r.Hi && a.Port() != r.Lo+3, "port %d outside %v or taken", a.Port(), r)
		}
	}
	comms := newComms(t, eps)
	allReduceSum(t, comms, 1000)
	// 8 ports in use, 1 busy: a third rank's 4 paths cannot all bind.
	_, err = Listen(ctx, Config{Size: 1, Paths: 4, PortRange: r})
	require.ErrorContains(t, err, "no free UDP port")
	require.ErrorContains(t, err, r.String())
	for _, ep := range eps {
		require.NoError(t, ep.Close())
	}
}

// freeRange finds n consecutive ports free on 127.0.0.1 now (others may
// take them later, as for any port range).
func freeRange(t *testing.T, n int) PortRange {
	for lo := 42000; lo < 60000; lo += 97 {
		ok := true
		for p := lo; p < lo+n && ok; p++ {
			s, err := OpenUDP(netip.MustParseAddrPort(fmt.Sprintf("127.0.0.1:%d", p)), 0)
			if err != nil {
				ok = false
				continue
			}
			_ = s.Close()
		}
		if ok {
			return PortRange{uint16(lo), uint16(lo + n - 1)}
		}
	}
	t.Skip("no range of free ports found")
	return PortRange{}
}

func TestOpenInRangeSkipsOnlyPortsInUse(t *testing.T) {
	calls := 0
	inUse := func(int, netip.AddrPort) (PathSocket, error) {
		calls++
		return nil, fmt.Errorf("listen: %w", syscall.EADDRINUSE)
	}
	_, err := openInRange(inUse, 0, netip.MustParseAddr("127.0.0.1"), PortRange{100, 104}, map[uint16]bool{102: true})
	require.ErrorContains(t, err, "no free UDP port")
	require.Equal(t, 4, calls, "every port but the taken one tried once")
	calls = 0
	other := func(int, netip.AddrPort) (PathSocket, error) { calls++; return nil, syscall.EACCES }
	_, err = openInRange(other, 0, netip.MustParseAddr("127.0.0.1"), PortRange{100, 104}, nil)
	require.ErrorIs(t, err, syscall.EACCES)
	require.Equal(t, 1, calls)
}

// TestInterfacesBindPaths binds path 0 to the loopback interface by name
// and path 1 to an address: both work, and the published addresses are
// theirs.
func TestInterfacesBindPaths(t *testing.T) {
	ctx := testCtx(t)
	eps, err := NewLocalWorld(ctx, 2, Config{Paths: 4, Interfaces: []string{"lo", "127.0.0.1"}})
	require.NoError(t, err)
	for _, ep := range eps {
		for _, a := range ep.Addr().Paths {
			require.Equal(t, "127.0.0.1", a.Addr().String())
		}
		require.Equal(t, []pathBind{{lo4, "lo"}, {lo4, ""}, {lo4, "lo"}, {lo4, ""}}, ep.binds)
	}
	allReduceSum(t, newComms(t, eps), 1000)
	for _, ep := range eps {
		require.NoError(t, ep.Close())
	}
	_, err = Listen(ctx, Config{Size: 1, Interfaces: []string{"nosuchif0"}})
	require.ErrorContains(t, err, "nosuchif0")
}

var lo4 = netip.MustParseAddr("127.0.0.1")
