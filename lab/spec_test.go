//go:build linux

package lab

import (
	"math"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/launcher/hosts"
)

func TestSpecDefaultsAndLimits(t *testing.T) {
	s, err := Spec{Name: "a1"}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, Spec{Name: "a1", Sites: 2, HostsPerSite: 2, Paths: 2, MTU: 1500, QueueMS: 20, PriorityDSCP: DefaultPriorityDSCP}, s)
	off, err := Spec{Name: "a1", PriorityDSCP: -1}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, -1, off.PriorityDSCP, "off stays off when the state is read back")
	for _, bad := range []Spec{
		{}, {Name: "A"}, {Name: "1a"}, {Name: "a-b"}, {Name: "abcdefghijklm"},
		{Name: "a", Sites: 1}, {Name: "a", Sites: 5}, {Name: "a", Paths: 65}, {Name: "a", Paths: -1},
		{Name: "a", HostsPerSite: 201}, {Name: "a", MTU: 500}, {Name: "a", MTU: 70000},
		{Name: "a", RateMbit: -1}, {Name: "a", DelayMS: math.NaN()}, {Name: "a", LossPct: 101},
		{Name: "a", JitterMS: 1e9}, {Name: "a", WANDelayMS: -2}, {Name: "a", QueueMS: -1},
		{Name: "a", DelayMS: 6000, WANDelayMS: 6000}, {Name: "a", PriorityDSCP: 64},
	} {
		require.Error(t, CheckSpec(bad), "%+v", bad)
	}
	require.NoError(t, CheckSpec(Spec{Name: "abcdefghijkl", Sites: 4, Paths: 64, HostsPerSite: 200, MTU: 9000, LossPct: 100}))
	sh, err := Spec{Name: "a", DelayMS: 2, WANDelayMS: 10, JitterMS: 1, RateMbit: 200, LossPct: 1}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, Shape{RateMbit: 200, DelayMS: 12, JitterMS: 1, LossPct: 1}, sh.shape())
}

func TestParsePath(t *testing.T) {
	for _, c := range []struct {
		in           string
		sites, paths int
		want         Path
	}{
		{"1", 2, 4, Path{1, 2, 1}}, {"p4", 2, 4, Path{1, 2, 4}}, {"s1-s2/p3", 2, 4, Path{1, 2, 3}},
		{"s4-s2/p1", 4, 1, Path{2, 4, 1}}, {"1-3/2", 3, 2, Path{1, 3, 2}},
	} {
		got, err := ParsePath(c.in, c.sites, c.paths)
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
		again, err := ParsePath(got.String(), c.sites, c.paths)
		require.NoError(t, err)
		require.Equal(t, got, again)
	}
	for _, c := range []struct {
		in           string
		sites, paths int
	}{
		{"0", 2, 4}, {"5", 2, 4}, {"p", 2, 4}, {"1", 3, 4}, {"s1-s1/p1", 2, 4}, {"s1-s5/p1", 4, 4},
		{"s1/p1", 2, 4}, {"x", 2, 4}, {"-1", 2, 4}, {"+1", 2, 4}, {"s1-s2/p+1", 2, 4}, {"", 2, 4},
		{strings.Repeat("1", 40), 2, 4}, {"s0-s2/p1", 2, 4},
	} {
		_, err := ParsePath(c.in, c.sites, c.paths)
		require.Error(t, err, c.in)
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"1", "p2", "s1-s3/p2", "3-1/1", "s-s/p", "s1-s2/p99999"} {
		f.Add(s, 3, 4)
	}
	f.Fuzz(func(t *testing.T, s string, sites, paths int) {
		sites, paths = 2+abs(sites)%3, 1+abs(paths)%MaxPaths
		p, err := ParsePath(s, sites, paths)
		if err != nil {
			return
		}
		if p.A < 1 || p.A >= p.B || p.B > sites || p.I < 1 || p.I > paths {
			t.Fatalf("ParsePath(%q, %d, %d) = %+v", s, sites, paths, p)
		}
		if q, err := ParsePath(p.String(), sites, paths); err != nil || q != p {
			t.Fatalf("%v does not read back: %v %v", p, q, err)
		}
	})
}

func abs(x int) int {
	if x < 0 {
		if x == math.MinInt {
			return 0
		}
		return -x
	}
	return x
}

func TestParseDirs(t *testing.T) {
	for in, want := range map[string][]Dir{"fwd": {Fwd}, "rev": {Rev}, "both": {Fwd, Rev}, "": {Fwd, Rev}} {
		got, err := ParseDirs(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err := ParseDirs("up")
	require.Error(t, err)
}

// The plan of a lab: names, addresses, interfaces and queues are unique
// and as the package documentation says.
func TestPlan(t *testing.T) {
	s, err := Spec{Name: "x", Sites: 4, HostsPerSite: 3, Paths: 3}.withDefaults()
	require.NoError(t, err)
	p := newPlan(s)
	require.Len(t, p.routers, 4)
	require.Len(t, p.hosts, 12)
	require.Len(t, p.paths, 6*3)
	require.Equal(t, Node{Name: "s2h3", NS: "x-s2h3", Site: 2, Host: 3, Addr: netip.MustParseAddr("10.2.0.13")}, p.hosts[5])
	require.Equal(t, Node{Name: "s4r", NS: "x-s4r", Site: 4, Addr: netip.MustParseAddr("10.4.0.1")}, p.routers[3])
	n, err := p.node("x-s3h1")
	require.NoError(t, err)
	require.Equal(t, "s3h1", n.Name)
	_, err = p.node("s5h1")
	require.Error(t, err)

	addrs, macs := map[netip.Addr]bool{}, map[string]bool{}
	ifs := map[[2]string]bool{} // router, interface
	queues := map[[2]int]bool{} // router site, queue
	pairs := map[int]bool{}
	for _, pa := range p.paths {
		a, b := p.ends(pa)
		require.Equal(t, pa.A, a.router.Site)
		require.Equal(t, pa.B, b.router.Site)
		pairs[pairIndex(pa.A, pa.B, 4)] = true
		for _, e := range []end{a, b} {
			require.False(t, addrs[e.addr], "%v twice", e.addr)
			require.False(t, macs[e.mac], "%v twice", e.mac)
			require.False(t, ifs[[2]string{e.router.Name, e.ifname}])
			require.False(t, queues[[2]int{e.router.Site, int(e.queue)}])
			addrs[e.addr], macs[e.mac] = true, true
			ifs[[2]string{e.router.Name, e.ifname}] = true
			queues[[2]int{e.router.Site, int(e.queue)}] = true
			got, ok := p.pathOf(e.router.Site, e.ifname)
			require.True(t, ok, e.ifname)
			require.Equal(t, pa, got)
		}
		require.Equal(t, a.addr.Next(), b.addr) // one /24 per link
		from, to := p.egress(pa, Rev)
		require.Equal(t, b, from)
		require.Equal(t, a, to)
	}
	require.Len(t, pairs, 6)
	a, b := p.ends(Path{1, 3, 2})
	require.Equal(t, "s3p2", a.ifname)
	require.Equal(t, "s1p2", b.ifname)
	require.Equal(t, netip.MustParseAddr("10.101.2.1"), a.addr)
	for _, bad := range []string{"lan", "h1", "s1p1", "s5p1", "s2p4", "s2p0", "s2p01", "s02p1", "s2p1x"} {
		_, ok := p.pathOf(1, bad)
		require.False(t, ok, bad)
	}
}

func TestTbf(t *testing.T) {
	burst, limit := tbf(200, 1500, 20)
	require.Equal(t, 25000, burst) // a millisecond at 200 Mbit/s
	require.Equal(t, 25000*20+25000, limit)
	burst, limit = tbf(10, 9000, 20)
	require.Equal(t, 18200, burst) // two jumbo packets and some
	require.Equal(t, 25000+18200, limit)
}

func TestHostfile(t *testing.T) {
	s, err := Spec{Name: "lb", Sites: 2, HostsPerSite: 1}.withDefaults()
	require.NoError(t, err)
	l := &Lab{plan: newPlan(s)}
	require.Equal(t, "# gocoll lab lb: 2 sites x 1 hosts\n"+
		"lb-s1h1 slots=4 site=site1 addr=10.1.0.11\n"+
		"lb-s2h1 slots=4 site=site2 addr=10.2.0.11\n", l.Hostfile(4))
	list, err := hosts.ParseHostfile("lab", strings.NewReader(l.Hostfile(4)))
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, "lb-s2h1", list[1].Host)
	require.Equal(t, "site2", list[1].Site)
	require.Equal(t, 4, list[1].Slots)
}

func TestDelaydArgs(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want []string
		ok   bool
	}{
		{[]string{"lab", "delayd", "--config", "f"}, []string{"--config", "f"}, true},
		{[]string{testBinaryGuard, "lab", "delayd"}, []string{}, true},
		{[]string{"lab"}, nil, false},
		{[]string{"-test.v", "lab", "delayd"}, nil, false},
		{nil, nil, false},
	} {
		got, ok := DelaydArgs(c.in)
		require.Equal(t, c.ok, ok, "%q", c.in)
		require.Equal(t, c.want, got, "%q", c.in)
	}
}
