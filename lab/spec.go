//go:build linux

package lab

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// Defaults and limits of [Spec].
const (
	// DefaultPaths is Spec.Paths when it is 0.
	DefaultPaths = 2
	// MaxPaths is the most paths between two sites.
	MaxPaths = 64
	// DefaultSites is Spec.Sites when it is 0.
	DefaultSites = 2
	// MaxSites is the most sites.
	MaxSites = 4
	// DefaultHostsPerSite is Spec.HostsPerSite when it is 0.
	DefaultHostsPerSite = 2
	// MaxHostsPerSite is the most hosts in one site.
	MaxHostsPerSite = 200
	// DefaultMTU is Spec.MTU when it is 0.
	DefaultMTU = 1500
	// MinMTU and MaxMTU bound Spec.MTU.
	MinMTU, MaxMTU = 576, 65000
	// DefaultQueueMS is Spec.QueueMS when it is 0: a rate-limited path
	// queues up to this many milliseconds of its rate before it drops.
	DefaultQueueMS = 20
	// MaxRateMbit bounds a path's rate (0 is unlimited).
	MaxRateMbit = 1e6
	// MaxDelayMS bounds a path's one-way delay and jitter.
	MaxDelayMS = 10000
	// MaxQueueMS bounds Spec.QueueMS.
	MaxQueueMS = 10000
	// DefaultPriorityDSCP is Spec.PriorityDSCP when it is 0: CS6 (48),
	// MetaRoCE's default class for its control datagrams
	// (mrtransport.DefaultControlDSCP).
	DefaultPriorityDSCP = 48
	// MaxNameLen is the longest lab name.
	MaxNameLen = 12
)

// Spec describes a lab. A zero field takes its documented default; a field
// out of range makes [Up] fail.
type Spec struct {
	// Name names the lab, [a-z][a-z0-9]{0,11}. Its namespaces are named
	// "<Name>-<node>" and its state kept in StateRoot/<Name>. Required.
	Name string
	// Sites is the number of sites, 2 to MaxSites. Default DefaultSites.
	// Every pair of sites is joined by Paths links (a full mesh).
	Sites int
	// HostsPerSite is the number of hosts in each site, 1 to
	// MaxHostsPerSite. Default DefaultHostsPerSite.
	HostsPerSite int
	// Paths is the number of parallel links between each pair of sites,
	// 1 to MaxPaths. Default DefaultPaths.
	Paths int
	// RateMbit is every path's rate in each direction, in Mbit/s; 0 is
	// unlimited (the kernel's veth speed).
	RateMbit float64
	// DelayMS is every path's one-way delay in milliseconds, added to
	// WANDelayMS.
	DelayMS float64
	// JitterMS spreads each packet's delay uniformly over ±JitterMS
	// (never below zero); it reorders packets.
	JitterMS float64
	// LossPct is the percentage of packets each path drops at random in
	// each direction, 0 to 100.
	LossPct float64
	// WANDelayMS is the one-way delay between sites, added to DelayMS.
	WANDelayMS float64
	// MTU is every link's MTU, MinMTU to MaxMTU. Default DefaultMTU.
	MTU int
	// QueueMS sizes a rate-limited path's queue: rate × QueueMS, 1 to
	// MaxQueueMS. Default DefaultQueueMS.
	QueueMS float64
	// Seed, when not 0, is the routers' fib_multipath_hash_seed, so the
	// paths flows take are the same on every machine.
	Seed uint32
	// L3Hash makes the routers hash addresses only
	// (fib_multipath_hash_policy 0), so all flows between two hosts take
	// one path; by default they hash the 5-tuple (policy 1), ports
	// included.
	L3Hash bool
	// PriorityDSCP is the DSCP (1 to 63) that every rate-limited path
	// queue serves first: a strict-priority band ahead of the data's
	// FIFO, as a DiffServ router serves network control (see the package
	// doc). Negative: one FIFO for all (the token bucket's own queue).
	// Default DefaultPriorityDSCP. The band is not policed, unlike a
	// DiffServ router's network-control class: only small control traffic
	// may carry this DSCP (MetaRoCE's ACKs do; its data never does), as
	// data marked with it would starve the path's other traffic.
	PriorityDSCP int
	// Delayd is the command that runs the delay daemon (followed by its
	// flags). Default: this executable with arguments "lab delayd", which
	// the gocoll command answers, as does a test binary whose TestMain
	// calls [DelaydMain] (see [DelaydArgs]). It is run only when a path
	// has delay or jitter.
	Delayd []string
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,11}$`)

// CheckName reports whether name can name a lab.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("lab name %q: want a lowercase letter then up to %d lowercase letters or digits", name, MaxNameLen-1)
	}
	return nil
}

// withDefaults returns s with its defaults filled in, or an error naming
// the first field out of range.
func (s Spec) withDefaults() (Spec, error) {
	if err := CheckName(s.Name); err != nil {
		return s, err
	}
	ints := []struct {
		name          string
		v             *int
		def, min, max int
	}{
		{"sites", &s.Sites, DefaultSites, 2, MaxSites},
		{"hosts per site", &s.HostsPerSite, DefaultHostsPerSite, 1, MaxHostsPerSite},
		{"paths", &s.Paths, DefaultPaths, 1, MaxPaths},
		{"MTU", &s.MTU, DefaultMTU, MinMTU, MaxMTU},
	}
	for _, f := range ints {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < f.min || *f.v > f.max {
			return s, fmt.Errorf("lab %s: %s %d not in [%d, %d]", s.Name, f.name, *f.v, f.min, f.max)
		}
	}
	if s.QueueMS == 0 {
		s.QueueMS = DefaultQueueMS
	}
	switch {
	case s.PriorityDSCP == 0:
		s.PriorityDSCP = DefaultPriorityDSCP
	case s.PriorityDSCP > 63:
		return s, fmt.Errorf("lab %s: priority DSCP %d above 63", s.Name, s.PriorityDSCP)
	}
	if err := checkRange("queue", s.QueueMS, 1, MaxQueueMS); err != nil {
		return s, fmt.Errorf("lab %s: %w", s.Name, err)
	}
	if err := checkRange("WAN delay", s.WANDelayMS, 0, MaxDelayMS); err != nil {
		return s, fmt.Errorf("lab %s: %w", s.Name, err)
	}
	if err := s.shape().check(); err != nil {
		return s, fmt.Errorf("lab %s: %w", s.Name, err)
	}
	return s, nil
}

// shape is the shaping every path starts with, in each direction.
func (s Spec) shape() Shape {
	return Shape{RateMbit: s.RateMbit, DelayMS: s.DelayMS + s.WANDelayMS, JitterMS: s.JitterMS, LossPct: s.LossPct}
}

func checkRange(name string, v, lo, hi float64) error {
	if math.IsNaN(v) || v < lo || v > hi {
		return fmt.Errorf("%s %v not in [%v, %v]", name, v, lo, hi)
	}
	return nil
}

// Shape is how one direction of a path is emulated.
type Shape struct {
	// RateMbit is the rate in Mbit/s (token bucket); 0 is unlimited.
	RateMbit float64 `json:"rate_mbit"`
	// DelayMS is the one-way delay in milliseconds.
	DelayMS float64 `json:"delay_ms"`
	// JitterMS spreads the delay uniformly over ±JitterMS.
	JitterMS float64 `json:"jitter_ms"`
	// LossPct is the percentage of packets dropped at random.
	LossPct float64 `json:"loss_pct"`
}

func (sh Shape) check() error {
	for _, f := range []struct {
		name   string
		v, max float64
	}{{"rate", sh.RateMbit, MaxRateMbit}, {"delay", sh.DelayMS, MaxDelayMS}, {"jitter", sh.JitterMS, MaxDelayMS}, {"loss", sh.LossPct, 100}} {
		if err := checkRange(f.name, f.v, 0, f.max); err != nil {
			return err
		}
	}
	return nil
}

// delayed says whether packets go through the delay daemon.
func (sh Shape) delayed() bool { return sh.DelayMS > 0 || sh.JitterMS > 0 }

// tbf returns the token bucket's burst and limit in bytes for rate and
// mtu: a burst of a millisecond at the rate but at least two packets and
// 15000 bytes, and a queue of queueMS at the rate on top.
func tbf(rateMbit float64, mtu int, queueMS float64) (burst, limit int) {
	bytesPerSec := rateMbit * 1e6 / 8
	burst = max(int(bytesPerSec/1000), 2*mtu+200, 15000)
	limit = int(bytesPerSec*queueMS/1000) + burst
	return burst, limit
}

// Dir is a direction of a path.
type Dir int

// Directions. Fwd goes from the path's lower-numbered site to the higher.
const (
	Fwd Dir = iota
	Rev
)

func (d Dir) String() string {
	if d == Rev {
		return "rev"
	}
	return "fwd"
}

// ParseDirs parses "fwd", "rev" or "both".
func ParseDirs(s string) ([]Dir, error) {
	switch s {
	case "fwd":
		return []Dir{Fwd}, nil
	case "rev":
		return []Dir{Rev}, nil
	case "both", "":
		return []Dir{Fwd, Rev}, nil
	}
	return nil, fmt.Errorf("direction %q: want fwd, rev or both", s)
}

// Path names one link between two sites: path I (from 1) between sites A
// and B, A < B. Its String form is "sA-sB/pI".
type Path struct {
	A, B, I int
}

func (p Path) String() string { return fmt.Sprintf("s%d-s%d/p%d", p.A, p.B, p.I) }

// ParsePath parses a path of a lab with the given sites and paths:
// "sA-sB/pI" (also "A-B/I"), or, in a lab of two sites, "pI" or "I".
func ParsePath(s string, sites, paths int) (Path, error) {
	bad := func(why string) (Path, error) {
		return Path{}, fmt.Errorf("path %q: %s", s, why)
	}
	if len(s) > 32 {
		return bad("too long")
	}
	p := Path{A: 1, B: 2}
	idx := s
	if pair, i, ok := strings.Cut(s, "/"); ok {
		a, b, ok := strings.Cut(pair, "-")
		if !ok {
			return bad("want sA-sB/pI")
		}
		var err1, err2 error
		p.A, err1 = atoiPrefixed(a, "s")
		p.B, err2 = atoiPrefixed(b, "s")
		if err1 != nil || err2 != nil {
			return bad("want sA-sB/pI")
		}
		if p.A > p.B {
			p.A, p.B = p.B, p.A
		}
		if p.A < 1 || p.B > sites || p.A == p.B {
			return bad(fmt.Sprintf("sites must be two of 1 to %d", sites))
		}
		idx = i
	} else if sites != 2 {
		return bad(fmt.Sprintf("with %d sites, name the sites: sA-sB/pI", sites))
	}
	var err error
	if p.I, err = atoiPrefixed(idx, "p"); err != nil {
		return bad("want a path number")
	}
	if p.I < 1 || p.I > paths {
		return bad(fmt.Sprintf("path number must be 1 to %d", paths))
	}
	return p, nil
}

func atoiPrefixed(s, prefix string) (int, error) {
	s = strings.TrimPrefix(s, prefix)
	if s == "" || len(s) > 4 || s[0] == '+' || s[0] == '-' {
		return 0, errors.New("not a number")
	}
	return strconv.Atoi(s)
}

// pairIndex numbers the site pairs (1,2)=0, (1,3)=1, ..., (3,4)=5.
func pairIndex(a, b, sites int) int {
	k := 0
	for x := 1; x < a; x++ {
		k += sites - x
	}
	return k + b - a - 1
}

// Node is one namespace of a lab: a host or a site's router.
type Node struct {
	// Name is the node's name within the lab: "sShH" or "sSr".
	Name string
	// NS is its network namespace, "<lab>-<Name>".
	NS string
	// Site is its site, from 1.
	Site int
	// Host is its number within the site, from 1, or 0 for the router.
	Host int
	// Addr is its address on the site's LAN.
	Addr netip.Addr
}

// SiteName is the site name hostfiles give site s.
func SiteName(s int) string { return fmt.Sprintf("site%d", s) }

// plan is the names and addresses of a lab, a pure function of its spec.
type plan struct {
	spec    Spec
	routers []Node // by site - 1
	hosts   []Node // site by site
	paths   []Path // pair by pair, then by index
	byName  map[string]Node
}

func newPlan(s Spec) *plan {
	p := &plan{spec: s, byName: map[string]Node{}}
	for site := 1; site <= s.Sites; site++ {
		r := Node{Name: fmt.Sprintf("s%dr", site), Site: site, Addr: netip.AddrFrom4([4]byte{10, byte(site), 0, 1})}
		p.routers = append(p.routers, r)
		for h := 1; h <= s.HostsPerSite; h++ {
			p.hosts = append(p.hosts, Node{Name: fmt.Sprintf("s%dh%d", site, h), Site: site, Host: h,
				Addr: netip.AddrFrom4([4]byte{10, byte(site), 0, byte(10 + h)})})
		}
	}
	for i := range p.routers {
		p.routers[i].NS = s.Name + "-" + p.routers[i].Name
		p.byName[p.routers[i].Name] = p.routers[i]
	}
	for i := range p.hosts {
		p.hosts[i].NS = s.Name + "-" + p.hosts[i].Name
		p.byName[p.hosts[i].Name] = p.hosts[i]
	}
	for a := 1; a <= s.Sites; a++ {
		for b := a + 1; b <= s.Sites; b++ {
			for i := 1; i <= s.Paths; i++ {
				p.paths = append(p.paths, Path{A: a, B: b, I: i})
			}
		}
	}
	return p
}

func (p *plan) nodes() []Node { return append(append([]Node(nil), p.routers...), p.hosts...) }

// node finds a node by its name in the lab ("s1h2") or its namespace
// ("<lab>-s1h2").
func (p *plan) node(name string) (Node, error) {
	n, ok := p.byName[strings.TrimPrefix(name, p.spec.Name+"-")]
	if !ok {
		return Node{}, fmt.Errorf("lab %s has no node %q (hosts are sShH, routers sSr)", p.spec.Name, name)
	}
	return n, nil
}

// end is one end of a path: the router's interface and address there.
type end struct {
	router Node
	ifname string // in the router's namespace: "s<peer site>p<I>"
	addr   netip.Addr
	mac    string
	queue  uint16 // the NFQUEUE number of this interface's egress
}

// ends returns the two ends of path pa: the end in site A, then in site B.
// Path I between the pair numbered k has 10.(100+k).I.1 in A and .2 in B.
func (p *plan) ends(pa Path) (a, b end) {
	k := pairIndex(pa.A, pa.B, p.spec.Sites)
	mk := func(site, peer, side int) end {
		return end{
			router: p.routers[site-1],
			ifname: fmt.Sprintf("s%dp%d", peer, pa.I),
			addr:   netip.AddrFrom4([4]byte{10, byte(100 + k), byte(pa.I), byte(side)}),
			mac:    fmt.Sprintf("02:67:6c:%02x:%02x:%02x", k, pa.I, side),
			queue:  uint16(peer<<8 | pa.I),
		}
	}
	return mk(pa.A, pa.B, 1), mk(pa.B, pa.A, 2)
}

// egress returns the end whose egress is direction d of pa, and the other.
func (p *plan) egress(pa Path, d Dir) (from, to end) {
	a, b := p.ends(pa)
	if d == Rev {
		return b, a
	}
	return a, b
}

// pathOf returns the path that interface ifname of site's router is, and
// whether it is one.
func (p *plan) pathOf(site int, ifname string) (Path, bool) {
	var peer, i int
	if n, err := fmt.Sscanf(ifname, "s%dp%d", &peer, &i); err != nil || n != 2 || fmt.Sprintf("s%dp%d", peer, i) != ifname {
		return Path{}, false
	}
	if peer < 1 || peer > p.spec.Sites || peer == site || i < 1 || i > p.spec.Paths {
		return Path{}, false
	}
	return Path{A: min(site, peer), B: max(site, peer), I: i}, true
}

// chain is the iptables chain of the interface's egress emulation.
func chain(ifname string) string { return "GL-" + ifname }
