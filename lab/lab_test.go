//go:build linux

package lab_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/lab"
	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

// TestMain answers "lab delayd" so that labs with delay can start their
// daemon from this test binary (lab.Spec.Delayd's default is this
// executable).
func TestMain(m *testing.M) {
	if args, ok := lab.DelaydArgs(os.Args[1:]); ok {
		os.Exit(lab.DelaydMain(args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// labPrefix starts the names of the labs these tests build; the pid and
// a count follow, so that test processes running at once do not collide.
var labPrefix = flag.String("labprefix", "lt", "prefix of the names of the labs the tests build")

var labCount atomic.Int32

// upLab builds a lab for the test and, at its end, tears it down and checks
// that nothing is left: no namespace, no process, no state. It skips where
// the machine cannot make namespaces.
func upLab(t *testing.T, spec lab.Spec) *lab.Lab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to build a lab (network namespaces)")
	}
	// The pid's last digits, as many as the name leaves room for.
	mod := 100000
	for mod > 10 && len(*labPrefix)+len(strconv.Itoa(mod-1))+2 > lab.MaxNameLen {
		mod /= 10
	}
	spec.Name = fmt.Sprintf("%s%d%d", *labPrefix, os.Getpid()%mod, labCount.Add(1))
	ctx := context.Background()
	start := time.Now()
	l, err := lab.Up(ctx, spec)
	if errors.Is(err, lab.ErrUnavailable) {
		t.Skipf("cannot build a lab here: %v", err)
	}
	require.NoError(t, err)
	t.Logf("lab %s up in %v", spec.Name, time.Since(start))
	t.Cleanup(func() {
		var delayd []int
		for _, r := range l.Routers() {
			delayd = append(delayd, l.DelaydPid(r.Name))
		}
		start := time.Now()
		require.NoError(t, l.Down(ctx))
		t.Logf("lab %s down in %v", spec.Name, time.Since(start))
		requireGone(t, l, delayd)
	})
	return l
}

// requireGone checks that lab l left nothing: its namespaces, its state
// directory, and the processes pids (0s skipped).
func requireGone(t *testing.T, l *lab.Lab, pids []int) {
	t.Helper()
	for _, n := range append(l.Hosts(), l.Routers()...) {
		_, err := os.Stat("/run/netns/" + n.NS)
		require.ErrorIs(t, err, os.ErrNotExist, "namespace %s is left", n.NS)
	}
	_, err := os.Stat(lab.StateRoot + "/" + l.Name())
	require.ErrorIs(t, err, os.ErrNotExist, "state of lab %s is left", l.Name())
	for _, pid := range pids {
		if pid != 0 {
			_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
			require.ErrorIs(t, err, os.ErrNotExist, "delay daemon %d is left", pid)
		}
	}
	_, err = lab.Open(l.Name())
	require.ErrorIs(t, err, lab.ErrNoLab)
}

// udpIn opens a UDP socket in node's namespace bound to addr.
func udpIn(t *testing.T, l *lab.Lab, node string, addr netip.AddrPort) *net.UDPConn {
	t.Helper()
	var c *net.UDPConn
	require.NoError(t, l.Do(node, func() (err error) {
		c, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(addr))
		return err
	}))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func hostAddr(t *testing.T, l *lab.Lab, node string) netip.Addr {
	t.Helper()
	n, err := l.Node(node)
	require.NoError(t, err)
	return n.Addr
}

// sendCount sends n datagrams from src to dst and returns how many dst
// received, reading until a second passes with none.
func sendCount(t *testing.T, src, dst *net.UDPConn, n int) int {
	t.Helper()
	to := dst.LocalAddr().(*net.UDPAddr)
	got := make(chan int, 1)
	go func() {
		buf := make([]byte, 2048)
		k := 0
		for {
			_ = dst.SetReadDeadline(time.Now().Add(time.Second))
			if _, err := dst.Read(buf); err != nil {
				got <- k
				return
			}
			k++
		}
	}()
	for range n {
		_, err := src.WriteToUDP(make([]byte, 100), to)
		require.NoError(t, err)
		time.Sleep(100 * time.Microsecond) // no burst beyond the receiver's buffer
	}
	return <-got
}

// Every host reaches every other across a lab of four sites, each pair's
// flows routed over that pair's paths, and the hostfile lists the hosts
// as the launcher reads them.
func TestFourSites(t *testing.T) {
	l := upLab(t, lab.Spec{Sites: 4, HostsPerSite: 1, Paths: 2})
	require.Len(t, l.Hosts(), 4)
	for _, src := range l.Hosts() {
		for _, dst := range l.Hosts() {
			if src.Site == dst.Site {
				continue
			}
			p, err := l.Route(context.Background(), src.Name, dst.Name, 40000, 5000, "udp")
			require.NoError(t, err)
			require.Equal(t, min(src.Site, dst.Site), p.A, "%s -> %s over %s", src.Name, dst.Name, p)
			require.Equal(t, max(src.Site, dst.Site), p.B, "%s -> %s over %s", src.Name, dst.Name, p)
		}
	}
	a := udpIn(t, l, "s1h1", netip.AddrPortFrom(hostAddr(t, l, "s1h1"), 0))
	for _, dst := range []string{"s2h1", "s3h1", "s4h1"} {
		b := udpIn(t, l, dst, netip.AddrPortFrom(hostAddr(t, l, dst), 5000))
		require.Equal(t, 50, sendCount(t, a, b, 50), "s1h1 -> %s", dst)
	}
	require.Contains(t, l.Hostfile(2), fmt.Sprintf("%s-s4h1 slots=2 site=site4 addr=10.4.0.11\n", l.Name()))
	stats, err := l.Stats(context.Background())
	require.NoError(t, err)
	require.Len(t, stats, 6*2*2) // pairs x paths x directions
	var fromS1 uint64
	for _, s := range stats {
		if s.Path.A == 1 && s.Dir == lab.Fwd {
			fromS1 += s.TxPackets
		}
	}
	require.GreaterOrEqual(t, fromS1, uint64(150)) // the 3 x 50 datagrams from s1h1
	requireBridgesSkipFirewall(t, l)
}

// requireBridgesSkipFirewall checks that no router passes the frames its
// site bridge switches through iptables (bridge-nf-call-*, present where
// the machine has br_netfilter loaded).
func requireBridgesSkipFirewall(t *testing.T, l *lab.Lab) {
	t.Helper()
	for _, r := range l.Routers() {
		got := map[string]string{}
		require.NoError(t, l.Do(r.Name, func() error {
			for _, k := range []string{"iptables", "ip6tables", "arptables"} {
				b, err := os.ReadFile("/proc/sys/net/bridge/bridge-nf-call-" + k)
				if errors.Is(err, os.ErrNotExist) {
					continue // no br_netfilter: bridged frames skip iptables
				}
				if err != nil {
					return err
				}
				got[k] = strings.TrimSpace(string(b))
			}
			return nil
		}))
		for k, v := range got {
			require.Equal(t, "0", v, "%s: bridge-nf-call-%s", r.Name, k)
		}
	}
}

// A silent cut drops every packet of the path, and the emulation's
// counters say so; a carrier cut moves the path's flows elsewhere; both
// are undone by Restore.
func TestCuts(t *testing.T) {
	ctx := context.Background()
	l := upLab(t, lab.Spec{Paths: 2, HostsPerSite: 1})
	p1, err := l.ParsePath("p1")
	require.NoError(t, err)
	// a flow over p1
	var sport uint16
	for sport = 40000; sport < 40100; sport++ {
		p, err := l.Route(ctx, "s1h1", "s2h1", sport, 5000, "udp")
		require.NoError(t, err)
		if p == p1 {
			break
		}
	}
	require.Less(t, sport, uint16(40100), "no flow of 100 took p1")
	a := udpIn(t, l, "s1h1", netip.AddrPortFrom(hostAddr(t, l, "s1h1"), sport))
	b := udpIn(t, l, "s2h1", netip.AddrPortFrom(hostAddr(t, l, "s2h1"), 5000))
	require.Equal(t, 20, sendCount(t, a, b, 20))

	require.NoError(t, l.Cut(ctx, p1, true))
	require.Equal(t, 0, sendCount(t, a, b, 20))
	stats, err := l.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, "silent", stats[0].State)
	require.Equal(t, uint64(20), stats[0].EmuDrops, "%+v", stats[0])
	require.Equal(t, uint64(20), stats[0].RxPackets, "%+v", stats[0]) // 20 before the cut
	p, err := l.Route(ctx, "s1h1", "s2h1", sport, 5000, "udp")
	require.NoError(t, err)
	require.Equal(t, p1, p, "routing is unaware of a silent cut")

	require.NoError(t, l.Cut(ctx, p1, false))
	p, err = l.Route(ctx, "s1h1", "s2h1", sport, 5000, "udp")
	require.NoError(t, err)
	require.NotEqual(t, p1, p, "a carrier cut moves the flow")
	require.Equal(t, 20, sendCount(t, a, b, 20))

	require.NoError(t, l.Restore(ctx, p1))
	p, err = l.Route(ctx, "s1h1", "s2h1", sport, 5000, "udp")
	require.NoError(t, err)
	require.Equal(t, p1, p)
	require.Equal(t, 20, sendCount(t, a, b, 20))
	stats, err = l.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, "up", stats[0].State)
	require.Equal(t, uint64(40), stats[0].RxPackets)
}

// Delay is applied by the daemon in each direction: no round trip is
// shorter than twice the one-way delay. Shape changes it while it runs.
func TestDelay(t *testing.T) {
	ctx := context.Background()
	l := upLab(t, lab.Spec{Paths: 1, HostsPerSite: 1, DelayMS: 5, WANDelayMS: 2})
	require.NotZero(t, l.DelaydPid("s1r"))
	a := udpIn(t, l, "s1h1", netip.AddrPortFrom(hostAddr(t, l, "s1h1"), 0))
	b := udpIn(t, l, "s2h1", netip.AddrPortFrom(hostAddr(t, l, "s2h1"), 5000))
	go func() { // echo
		buf := make([]byte, 2048)
		for {
			n, from, err := b.ReadFromUDP(buf)
			if err != nil {
				return
			}
			_, _ = b.WriteToUDP(buf[:n], from)
		}
	}()
	minRTT := func() time.Duration {
		best := time.Hour
		buf := make([]byte, 64)
		for range 10 {
			start := time.Now()
			_, err := a.WriteToUDP([]byte("ping"), b.LocalAddr().(*net.UDPAddr))
			require.NoError(t, err)
			require.NoError(t, a.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err = a.Read(buf)
			require.NoError(t, err)
			best = min(best, time.Since(start))
		}
		return best
	}
	rtt := minRTT()
	t.Logf("RTT at 7 ms one way: %v", rtt)
	require.GreaterOrEqual(t, rtt, 14*time.Millisecond)
	p, err := l.ParsePath("1")
	require.NoError(t, err)
	require.NoError(t, l.Shape(ctx, p, []lab.Dir{lab.Fwd}, lab.Shape{DelayMS: 20}))
	rtt = minRTT()
	t.Logf("RTT at 20 + 7 ms: %v", rtt)
	require.GreaterOrEqual(t, rtt, 27*time.Millisecond)
}

// Loss drops in the emulation's chain and is counted there; shaping one
// path leaves the other's counters alone; a rate puts a token bucket on the
// path.
func TestLossAndRate(t *testing.T) {
	ctx := context.Background()
	l := upLab(t, lab.Spec{Paths: 2, HostsPerSite: 1, Seed: 7})
	p1, p2 := l.Paths()[0], l.Paths()[1]
	require.NoError(t, l.Cut(ctx, p2, true))
	require.NoError(t, l.Shape(ctx, p1, []lab.Dir{lab.Fwd}, lab.Shape{LossPct: 100, RateMbit: 50}))
	a := udpIn(t, l, "s1h1", netip.AddrPortFrom(hostAddr(t, l, "s1h1"), 0))
	b := udpIn(t, l, "s2h1", netip.AddrPortFrom(hostAddr(t, l, "s2h1"), 5000))
	require.Equal(t, 0, sendCount(t, a, b, 30)) // over p1 or p2, all lost
	stats, err := l.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(30), stats[0].EmuDrops+stats[2].EmuDrops, "%+v", stats)
	require.Equal(t, lab.Shape{LossPct: 100, RateMbit: 50}, stats[0].Shape)
	require.Equal(t, lab.Shape{}, stats[1].Shape)
	out, err := l.Exec(ctx, "s1r", "tc", "qdisc", "show", "dev", "s2p1")
	require.NoError(t, err)
	require.Contains(t, string(out), "tbf 1: root")
	require.Contains(t, string(out), "rate 50Mbit")

	drops := stats[2].EmuDrops
	require.NoError(t, l.Shape(ctx, p1, []lab.Dir{lab.Fwd}, lab.Shape{}))
	stats, err = l.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, drops, stats[2].EmuDrops, "shaping p1 kept p2's counters")
	out, err = l.Exec(ctx, "s1r", "tc", "qdisc", "show", "dev", "s2p1")
	require.NoError(t, err)
	require.NotContains(t, string(out), "tbf")
}

// Random loss falls on each datagram of a GSO train, as on a wire after a
// NIC's segmentation, not on the train as a whole: with 100 % loss a train
// of 4 datagrams counts 4 drops (a whole train dropped would count 1). The
// hosts segment only while some path has loss.
func TestLossPerDatagramOfTrain(t *testing.T) {
	ctx := context.Background()
	l := upLab(t, lab.Spec{Paths: 1, HostsPerSite: 1})
	p := l.Paths()[0]
	require.NoError(t, l.Shape(ctx, p, []lab.Dir{lab.Fwd}, lab.Shape{LossPct: 100}))
	var s *udpio.Socket
	require.NoError(t, l.Do("s1h1", func() (err error) {
		s, err = udpio.Listen(netip.AddrPortFrom(hostAddr(t, l, "s1h1"), 0), udpio.Config{})
		return err
	}))
	t.Cleanup(func() { _ = s.Close() })
	if !s.Caps().GSO {
		t.Skip("no UDP GSO on this kernel")
	}
	to := netip.AddrPortFrom(hostAddr(t, l, "s2h1"), 5000)
	n, err := s.WriteBatch([]udpio.Message{{Buf: make([]byte, 4*1000), Addr: to, Segment: 1000}})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.True(t, s.Caps().GSO, "the train went as one GSO send")
	stats, err := l.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(4), stats[0].EmuDrops, "%+v", stats[0])

	segs := func() string {
		out, err := l.Exec(ctx, "s1h1", "ip", "-d", "link", "show", "eth0")
		require.NoError(t, err)
		return string(out)
	}
	require.Contains(t, segs(), "gso_max_segs 1 ")
	require.NoError(t, l.Shape(ctx, p, []lab.Dir{lab.Fwd}, lab.Shape{}))
	require.Contains(t, segs(), "gso_max_segs 65535 ")
}

// A delay daemon that does not start makes Up fail, naming it, and leaves
// no lab behind.
func TestDelaydFails(t *testing.T) {
	l := upLab(t, lab.Spec{Paths: 1, HostsPerSite: 1})
	name := l.Name() + "x"
	_, err := lab.Up(context.Background(), lab.Spec{Name: name, Paths: 1, HostsPerSite: 1, JitterMS: 1, Delayd: []string{"/bin/false"}})
	require.ErrorContains(t, err, "delay daemon")
	_, err = lab.Open(name)
	require.ErrorIs(t, err, lab.ErrNoLab)
	_, err = os.Stat("/run/netns/" + name + "-s1r")
	require.ErrorIs(t, err, os.ErrNotExist)
}

// Two labs run at once and tearing one down leaves the other working.
func TestTwoLabs(t *testing.T) {
	l1 := upLab(t, lab.Spec{Paths: 1, HostsPerSite: 1})
	l2 := upLab(t, lab.Spec{Paths: 3, HostsPerSite: 1})
	require.NoError(t, l1.Down(context.Background()))
	a := udpIn(t, l2, "s1h1", netip.AddrPortFrom(hostAddr(t, l2, "s1h1"), 0))
	b := udpIn(t, l2, "s2h1", netip.AddrPortFrom(hostAddr(t, l2, "s2h1"), 5000))
	require.Equal(t, 10, sendCount(t, a, b, 10))
	names, err := lab.List()
	require.NoError(t, err)
	require.Contains(t, names, l2.Name())
	require.NotContains(t, names, l1.Name())
}

// Changes from several goroutines (and so processes: the same lock file)
// to one lab are applied one at a time, none lost.
func TestConcurrentChanges(t *testing.T) {
	ctx := context.Background()
	l := upLab(t, lab.Spec{Paths: 4, HostsPerSite: 1})
	other, err := lab.Open(l.Name()) // as another process would
	require.NoError(t, err)
	done := make(chan error, 4)
	for i, p := range l.Paths() {
		lb := l
		if i%2 == 1 {
			lb = other
		}
		go func() { done <- lb.Shape(ctx, p, []lab.Dir{lab.Fwd}, lab.Shape{RateMbit: float64(100 * (i + 1))}) }()
	}
	for range 4 {
		require.NoError(t, <-done)
	}
	again, err := lab.Open(l.Name())
	require.NoError(t, err)
	for i, p := range l.Paths() {
		sh, err := again.Shaping(p, lab.Fwd)
		require.NoError(t, err)
		require.Equal(t, float64(100*(i+1)), sh.RateMbit, "path %s", p)
	}
}
