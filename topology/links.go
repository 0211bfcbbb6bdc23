package topology

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time" // time.Duration and its parser only: no clock
)

// Link is the figures of one level of links, or of one link: what the cost
// model (collective/tune) and the simulated fabric (transport/simnet) take.
type Link struct {
	Latency   time.Duration // one way, per message; in [0, MaxLatency]
	Bandwidth float64       // bytes per second of one transfer; finite, >= MinBandwidth
	Lanes     int           // transfers that get the full Bandwidth at once; 0 means 1
	// CPUPerByte is the CPU time, in seconds, one byte moved over the
	// level's transport costs its sender and receiver together; 0:
	// unknown. In [0, MaxCPUPerByte].
	CPUPerByte float64
	// CPUPerByteBusy is the CPU time, in seconds, a byte costs its sender
	// and receiver together while every pair of the level moves bytes at
	// once (on a machine whose cores the ranks share, more than one pair
	// alone: the transport's spins and the scheduler under contention;
	// the probe's contended round); 0: unknown (CPUPerByte stands). In
	// [0, MaxCPUPerByte]. The cost model takes the CPU a phase spends a
	// byte between the two by how busy it keeps the machine's cores, and
	// the least of the two where the cores bound the phase's time.
	CPUPerByteBusy float64
	// CPUPerMessage is the CPU time one message costs its sender and
	// receiver together, apart from its bytes; 0: unknown. In [0,
	// MaxCPUPerMessage]. The cost model (collective/tune) charges both to
	// the ranks' machines (RankInfo.CPU.Machine), whose cores bound a
	// phase from below where these are known.
	CPUPerMessage time.Duration
	// LatencyBusy is the one-way latency of a small message while every
	// pair of the level exchanges small messages at once (the probe's
	// contended round): on a machine whose cores the ranks share, each
	// message also waits for its receiver's turn on a core, which a lone
	// pair's Latency does not see (the two-site lab's 8 ranks on 2 cores:
	// a step of recursive doubling or of the hierarchical AllReduce at 8 B
	// took ~130 us beyond the model's links, bench/results/model_lab/s19).
	// 0: unknown. In [0, MaxLatency]. A CPU figure: it goes with them
	// (collective/tune's WithoutCPU clears it).
	LatencyBusy time.Duration
	// LatencyCold is the one-way latency of a small message whose
	// receiver has slept (waited past its transport's spin, so the
	// message must wake it and it must get a core again): the probe's
	// delayed ping-pongs, whose answer comes a millisecond or more after
	// the question, its trip less the answerer's hold and a hot trip
	// (probe/pair.go). The cost model prices a hop whose receiver has
	// waited longer than it spins at this figure instead of Latency
	// (collective/tune's cold phases: the hierarchical AllReduce's
	// all-gathers at one piece, bench/results/model_lab/model31.md).
	// 0: unknown (Latency stands). In [0, MaxLatency]. A CPU figure, as
	// LatencyBusy is (collective/tune's WithoutCPU clears it).
	LatencyCold time.Duration
}

// Bounds of a Link's CPU figures: far above any transport (a byte costs
// well under a nanosecond to copy, a message microseconds).
const (
	MaxCPUPerByte    = 1e-6
	MaxCPUPerMessage = time.Second
)

// Bounds of a Link's latency and bandwidth: far outside any network's, they
// catch a figure in the wrong unit (GB/s for bytes per second, an hour for
// a millisecond) and keep the cost model's predictions of any call within
// a Duration's range (which collective/tune saturates beyond).
const (
	MaxLatency   = time.Hour
	MinBandwidth = 1.0 // bytes per second
)

// Level names of a topology file's "levels": between ranks of a host,
// between hosts of a site (a host's NIC), between sites (a site's uplink).
const (
	LevelHost = "host"
	LevelSite = "site"
	LevelWAN  = "wan"
)

// Links is what a version 2 topology file says about its links: figures
// per level, each optional (nil: not given; a model uses its own), and
// per pair of hosts, and the CPU a rank's reduction costs a byte.
type Links struct {
	Host, Site, WAN *Link
	// Pairs give the figures of the transfers between two hosts, either
	// way, in place of their level's; they still share the hosts' NICs and
	// the sites' uplinks. At most one entry per pair.
	Pairs []HostLink
	// ReducePerByte is the CPU time, in seconds, a rank spends reducing one
	// byte of a received buffer into its own (the reduction kernel of a
	// float32 sum, dst = a + b, over buffers of a pipeline chunk: the
	// probe's measure); 0: unknown. In [0, MaxCPUPerByte]. Not a link's
	// figure: a rank's, whatever level the bytes arrived by. A CPU figure,
	// as Link's are (collective/tune's WithoutCPU clears it).
	ReducePerByte float64
}

// HostLink is the link between hosts A and B.
type HostLink struct {
	A, B string
	Link
}

// MaxLinks bounds the pairs of a topology's Links.
const MaxLinks = 1 << 16

// Clone returns a copy of ls that shares nothing with it (nil for nil).
func (ls *Links) Clone() *Links {
	if ls == nil {
		return nil
	}
	level := func(l *Link) *Link {
		if l == nil {
			return nil
		}
		c := *l
		return &c
	}
	return &Links{Host: level(ls.Host), Site: level(ls.Site), WAN: level(ls.WAN), Pairs: slices.Clone(ls.Pairs), ReducePerByte: ls.ReducePerByte}
}

// validate checks l's figures; field names the entry for the error.
func (l Link) validate(field string) error {
	switch {
	case l.Latency < 0 || l.Latency > MaxLatency:
		return invalidf("%s: latency %v is not in [0, %v]", field, l.Latency, MaxLatency)
	case !(l.Bandwidth >= MinBandwidth) || math.IsInf(l.Bandwidth, 0):
		return invalidf("%s: bandwidth %v is not a finite number of bytes per second >= %g", field, l.Bandwidth, MinBandwidth)
	case l.Lanes < 0:
		return invalidf("%s: lanes %d is negative", field, l.Lanes)
	case !(l.CPUPerByte >= 0 && l.CPUPerByte <= MaxCPUPerByte):
		return invalidf("%s: cpu_per_byte %v is not in [0, %g] seconds", field, l.CPUPerByte, MaxCPUPerByte)
	case !(l.CPUPerByteBusy >= 0 && l.CPUPerByteBusy <= MaxCPUPerByte):
		return invalidf("%s: cpu_per_byte_busy %v is not in [0, %g] seconds", field, l.CPUPerByteBusy, MaxCPUPerByte)
	case l.CPUPerMessage < 0 || l.CPUPerMessage > MaxCPUPerMessage:
		return invalidf("%s: cpu_per_message %v is not in [0, %v]", field, l.CPUPerMessage, MaxCPUPerMessage)
	case l.LatencyBusy < 0 || l.LatencyBusy > MaxLatency:
		return invalidf("%s: latency_busy %v is not in [0, %v]", field, l.LatencyBusy, MaxLatency)
	case l.LatencyCold < 0 || l.LatencyCold > MaxLatency:
		return invalidf("%s: latency_cold %v is not in [0, %v]", field, l.LatencyCold, MaxLatency)
	}
	return nil
}

// validate checks every figure of ls and that each pair joins two distinct
// hosts of t, once.
func (ls *Links) validate(t Topology) error {
	if !(ls.ReducePerByte >= 0 && ls.ReducePerByte <= MaxCPUPerByte) {
		return invalidf("reduce_per_byte: %v is not in [0, %g] seconds", ls.ReducePerByte, MaxCPUPerByte)
	}
	for _, lv := range []struct {
		name string
		l    *Link
	}{{LevelHost, ls.Host}, {LevelSite, ls.Site}, {LevelWAN, ls.WAN}} {
		if lv.l != nil {
			if err := lv.l.validate("levels." + lv.name); err != nil {
				return err
			}
		}
	}
	if len(ls.Pairs) > MaxLinks {
		return invalidf("links: %d entries, more than the limit of %d", len(ls.Pairs), MaxLinks)
	}
	hosts := buildLayout(t).ranksOfHost
	seen := map[[2]string]int{}
	for i, p := range ls.Pairs {
		field := "links[" + strconv.Itoa(i) + "]"
		for _, h := range []string{p.A, p.B} {
			if _, ok := hosts[h]; !ok {
				return invalidf("%s: host %q is not a host of the topology", field, h)
			}
		}
		if p.A == p.B {
			return invalidf("%s: joins host %q to itself", field, p.A)
		}
		k := [2]string{min(p.A, p.B), max(p.A, p.B)}
		if j, dup := seen[k]; dup {
			return invalidf("%s: hosts %q and %q already joined by links[%d]", field, p.A, p.B, j)
		}
		seen[k] = i
		if err := p.validate(field); err != nil {
			return err
		}
	}
	return nil
}

// Pair returns the figures of the link between hosts a and b, if t's Links
// give one.
func (t Topology) Pair(a, b string) (Link, bool) {
	if t.Links == nil {
		return Link{}, false
	}
	for _, p := range t.Links.Pairs {
		if p.A == a && p.B == b || p.A == b && p.B == a {
			return p.Link, true
		}
	}
	return Link{}, false
}

// linkJSON is a Link in a file: latency as a Go duration ("25us", "5ms");
// the CPU figures optional, a byte's in seconds, a message's as a
// duration.
type linkJSON struct {
	Latency        *string  `json:"latency"`
	Bandwidth      *float64 `json:"bandwidth"`
	Lanes          int      `json:"lanes,omitempty"`
	CPUPerByte     float64  `json:"cpu_per_byte,omitempty"`
	CPUPerByteBusy float64  `json:"cpu_per_byte_busy,omitempty"`
	CPUPerMessage  string   `json:"cpu_per_message,omitempty"`
	LatencyBusy    string   `json:"latency_busy,omitempty"`
	LatencyCold    string   `json:"latency_cold,omitempty"`
}

// hostLinkJSON is a HostLink in a file.
type hostLinkJSON struct {
	Hosts []string `json:"hosts"`
	linkJSON
}

// levelNames are the keys "levels" accepts.
var levelNames = map[string]bool{LevelHost: true, LevelSite: true, LevelWAN: true}

func (l linkJSON) link(field string) (Link, error) {
	if l.Latency == nil {
		return Link{}, invalidf("%s: missing \"latency\"", field)
	}
	if l.Bandwidth == nil {
		return Link{}, invalidf("%s: missing \"bandwidth\"", field)
	}
	d, err := time.ParseDuration(*l.Latency)
	if err != nil {
		return Link{}, invalidf("%s: latency %q is not a duration such as \"25us\" or \"5ms\"", field, *l.Latency)
	}
	out := Link{Latency: d, Bandwidth: *l.Bandwidth, Lanes: l.Lanes, CPUPerByte: l.CPUPerByte, CPUPerByteBusy: l.CPUPerByteBusy}
	if l.CPUPerMessage != "" {
		if out.CPUPerMessage, err = time.ParseDuration(l.CPUPerMessage); err != nil {
			return Link{}, invalidf("%s: cpu_per_message %q is not a duration such as \"20us\"", field, l.CPUPerMessage)
		}
	}
	if l.LatencyBusy != "" {
		if out.LatencyBusy, err = time.ParseDuration(l.LatencyBusy); err != nil {
			return Link{}, invalidf("%s: latency_busy %q is not a duration such as \"120us\"", field, l.LatencyBusy)
		}
	}
	if l.LatencyCold != "" {
		if out.LatencyCold, err = time.ParseDuration(l.LatencyCold); err != nil {
			return Link{}, invalidf("%s: latency_cold %q is not a duration such as \"80us\"", field, l.LatencyCold)
		}
	}
	return out, out.validate(field)
}

func toLinkJSON(l Link) linkJSON {
	s := l.Latency.String()
	b := l.Bandwidth
	out := linkJSON{Latency: &s, Bandwidth: &b, Lanes: l.Lanes, CPUPerByte: l.CPUPerByte, CPUPerByteBusy: l.CPUPerByteBusy}
	if l.CPUPerMessage != 0 {
		out.CPUPerMessage = l.CPUPerMessage.String()
	}
	if l.LatencyBusy != 0 {
		out.LatencyBusy = l.LatencyBusy.String()
	}
	if l.LatencyCold != 0 {
		out.LatencyCold = l.LatencyCold.String()
	}
	return out
}

// linksFromJSON reads a file's "levels", "links" and "reduce_per_byte".
func linksFromJSON(levels map[string]linkJSON, pairs []hostLinkJSON, reduce *float64) (*Links, error) {
	if len(levels) == 0 && len(pairs) == 0 && reduce == nil {
		return nil, nil // nothing given: as a version 1 file
	}
	ls := &Links{}
	if reduce != nil {
		ls.ReducePerByte = *reduce
		if !(ls.ReducePerByte >= 0 && ls.ReducePerByte <= MaxCPUPerByte) {
			return nil, invalidf("reduce_per_byte: %v is not in [0, %g] seconds", ls.ReducePerByte, MaxCPUPerByte)
		}
	}
	for name, lj := range levels {
		if !levelNames[name] {
			return nil, invalidf("levels: unknown level %q (want host, site or wan)", name)
		}
		l, err := lj.link("levels." + name)
		if err != nil {
			return nil, err
		}
		switch name {
		case LevelHost:
			ls.Host = &l
		case LevelSite:
			ls.Site = &l
		default:
			ls.WAN = &l
		}
	}
	if len(pairs) > MaxLinks {
		return nil, invalidf("links: %d entries, more than the limit of %d", len(pairs), MaxLinks)
	}
	for i, pj := range pairs {
		field := fmt.Sprintf("links[%d]", i)
		if len(pj.Hosts) != 2 {
			return nil, invalidf("%s: \"hosts\" has %d names, want 2", field, len(pj.Hosts))
		}
		l, err := pj.link(field)
		if err != nil {
			return nil, err
		}
		ls.Pairs = append(ls.Pairs, HostLink{A: pj.Hosts[0], B: pj.Hosts[1], Link: l})
	}
	return ls, nil
}

// linksToJSON is the inverse of linksFromJSON.
func linksToJSON(ls *Links) (map[string]linkJSON, []hostLinkJSON, *float64) {
	if ls == nil {
		return nil, nil, nil
	}
	var reduce *float64
	if ls.ReducePerByte != 0 {
		reduce = &ls.ReducePerByte
	}
	var levels map[string]linkJSON
	for _, lv := range []struct {
		name string
		l    *Link
	}{{LevelHost, ls.Host}, {LevelSite, ls.Site}, {LevelWAN, ls.WAN}} {
		if lv.l != nil {
			if levels == nil {
				levels = map[string]linkJSON{}
			}
			levels[lv.name] = toLinkJSON(*lv.l)
		}
	}
	var pairs []hostLinkJSON
	for _, p := range ls.Pairs {
		pairs = append(pairs, hostLinkJSON{Hosts: []string{p.A, p.B}, linkJSON: toLinkJSON(p.Link)})
	}
	return levels, pairs, reduce
}
