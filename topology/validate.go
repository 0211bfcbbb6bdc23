package topology

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gocoll/gocoll/internal/affinity"
)

// Limits on a topology. [Topology.Validate] rejects anything larger.
const (
	MaxRanks     = 1 << 20 // ranks in one topology
	MaxNICs      = 1024    // interfaces per rank
	MaxNICAddrs  = 256     // addresses per interface
	MaxNameBytes = 255     // bytes in a host, site, address, interface, vendor or brand name
	MaxMTU       = 1 << 20 // bytes
	maxCount     = 1 << 24 // cores and threads are sanity-checked against this
	maxBytes     = 1 << 40 // cache line and cache sizes are sanity-checked against this
)

// ErrInvalid is wrapped by every error that reports an invalid topology,
// file or host list, so callers can test for it with errors.Is.
var ErrInvalid = errors.New("topology: invalid")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// New returns a valid topology holding a copy of ranks, sorted by rank, with
// every empty Site set to DefaultSite and empty NIC and address lists set to
// nil. It returns an error wrapping ErrInvalid if the ranks fail
// [Topology.Validate].
func New(ranks []RankInfo) (Topology, error) {
	t := Topology{Ranks: sortedByRank(Topology{Ranks: ranks})}
	for i := range t.Ranks {
		r := &t.Ranks[i]
		r.Site = r.SiteName()
		r.NICs = cloneNICs(r.NICs)
	}
	if err := t.Validate(); err != nil {
		return Topology{}, err
	}
	return t, nil
}

func cloneNICs(nics []NIC) []NIC {
	if len(nics) == 0 {
		return nil
	}
	out := slices.Clone(nics)
	for i := range out {
		if len(out[i].Addrs) == 0 {
			out[i].Addrs = nil
		} else {
			out[i].Addrs = slices.Clone(out[i].Addrs)
		}
	}
	return out
}

// Validate reports whether t is a valid topology of n = len(t.Ranks) ranks:
//   - 1 <= n <= MaxRanks, and the ranks are 0..n-1, each exactly once;
//   - every Host is non-empty, and each host belongs to one site (an empty
//     Site counts as DefaultSite);
//   - on each host of k ranks, the LocalRanks are 0..k-1, each exactly once;
//   - names are valid, printable UTF-8 of at most MaxNameBytes bytes with no
//     leading or trailing space; Host and NIC names must not be empty;
//   - NICs respect MaxNICs, MaxNICAddrs and MaxMTU, and their addresses are
//     CIDR prefixes; CPU counts and sizes are not negative;
//   - Links, if set, has positive bandwidths, latencies and lanes that are
//     not negative, and each of its pairs joins two hosts of t, once.
//
// The error wraps ErrInvalid and names the offending entry as ranks[i].
func (t Topology) Validate() error {
	n := len(t.Ranks)
	if n == 0 {
		return invalidf("no ranks")
	}
	if n > MaxRanks {
		return invalidf("%d ranks, more than the limit of %d", n, MaxRanks)
	}
	if err := checkRankNumbers(t.Ranks); err != nil {
		return err
	}
	cpus := map[string]int{} // each distinct cpu list's count, parsed once
	for i, ri := range t.Ranks {
		if err := ri.validateIn(cpus); err != nil {
			return fmt.Errorf("%w: ranks[%d] (rank %d): %s", ErrInvalid, i, ri.Rank, err)
		}
	}
	if err := checkHosts(t.Ranks); err != nil {
		return err
	}
	if t.Links != nil {
		return t.Links.validate(t)
	}
	return nil
}

func checkRankNumbers(ranks []RankInfo) error {
	index := make([]int, len(ranks)) // index[r] = 1 + position of rank r in ranks
	for i, ri := range ranks {
		if ri.Rank < 0 || ri.Rank >= len(ranks) {
			return invalidf("ranks[%d]: rank %d out of range [0, %d)", i, ri.Rank, len(ranks))
		}
		if j := index[ri.Rank]; j != 0 {
			return invalidf("ranks[%d] and ranks[%d] are both rank %d", j-1, i, ri.Rank)
		}
		index[ri.Rank] = i + 1
	}
	return nil
}

// checkHosts checks that each host is on one site and that its local ranks
// are 0..k-1.
func checkHosts(ranks []RankInfo) error {
	type hostInfo struct {
		site       string
		firstRank  int
		localRanks map[int]int // local rank -> rank
	}
	hosts := make(map[string]*hostInfo)
	var order []string // hosts by first appearance, for a deterministic error
	for _, ri := range sortedByRank(Topology{Ranks: ranks}) {
		h := hosts[ri.Host]
		if h == nil {
			h = &hostInfo{site: ri.SiteName(), firstRank: ri.Rank, localRanks: make(map[int]int)}
			hosts[ri.Host] = h
			order = append(order, ri.Host)
		}
		if h.site != ri.SiteName() {
			return invalidf("host %q is on site %q (rank %d) and on site %q (rank %d)",
				ri.Host, h.site, h.firstRank, ri.SiteName(), ri.Rank)
		}
		if other, dup := h.localRanks[ri.LocalRank]; dup {
			return invalidf("host %q: ranks %d and %d both have local rank %d",
				ri.Host, other, ri.Rank, ri.LocalRank)
		}
		h.localRanks[ri.LocalRank] = ri.Rank
	}
	for _, host := range order {
		h := hosts[host]
		k := len(h.localRanks)
		for _, lr := range slices.Sorted(maps.Keys(h.localRanks)) {
			if lr < 0 || lr >= k {
				return invalidf("host %q: rank %d has local rank %d, outside [0, %d) for the host's %d ranks",
					host, h.localRanks[lr], lr, k, k)
			}
		}
	}
	return nil
}

func (ri RankInfo) validate() error { return ri.validateIn(nil) }

// validateIn is validate sharing cpus (CPUInfo.validateIn's listed) across
// ranks.
func (ri RankInfo) validateIn(cpus map[string]int) error {
	if ri.Host == "" {
		return errors.New("empty host")
	}
	if err := checkName("host", ri.Host); err != nil {
		return err
	}
	if err := checkName("site", ri.Site); err != nil {
		return err
	}
	if err := checkName("addr", ri.Addr); err != nil {
		return err
	}
	if len(ri.NICs) > MaxNICs {
		return fmt.Errorf("%d NICs, more than the limit of %d", len(ri.NICs), MaxNICs)
	}
	for j, nic := range ri.NICs {
		if err := nic.validate(); err != nil {
			return fmt.Errorf("nics[%d]: %w", j, err)
		}
	}
	if err := ri.CPU.validateIn(cpus); err != nil {
		return fmt.Errorf("cpu: %w", err)
	}
	return nil
}

func (nic NIC) validate() error {
	if nic.Name == "" {
		return errors.New("empty name")
	}
	if err := checkName("name", nic.Name); err != nil {
		return err
	}
	if nic.MTU < 0 || nic.MTU > MaxMTU {
		return fmt.Errorf("interface %q: MTU %d outside [0, %d]", nic.Name, nic.MTU, MaxMTU)
	}
	if len(nic.Addrs) > MaxNICAddrs {
		return fmt.Errorf("interface %q: %d addresses, more than the limit of %d",
			nic.Name, len(nic.Addrs), MaxNICAddrs)
	}
	for _, a := range nic.Addrs {
		if _, err := netip.ParsePrefix(a); err != nil {
			return fmt.Errorf("interface %q: address %q is not a CIDR prefix: %v", nic.Name, a, err)
		}
	}
	return nil
}

func (c CPUInfo) validate() error { return c.validateIn(nil) }

// validateIn is validate with listed, where not nil, holding the number of
// CPUs of each cpu list already parsed (a topology's ranks share a few).
func (c CPUInfo) validateIn(listed map[string]int) error {
	for _, s := range []struct{ field, v string }{{"arch", c.Arch}, {"vendor", c.Vendor}, {"brand", c.Brand}, {"machine", c.Machine}} {
		if err := checkName(s.field, s.v); err != nil {
			return err
		}
	}
	counts := []struct {
		field  string
		v, max int64
	}{
		{"physical_cores", int64(c.PhysicalCores), maxCount}, {"logical_cores", int64(c.LogicalCores), maxCount},
		{"threads_per_core", int64(c.ThreadsPerCore), maxCount}, {"cache_line_bytes", int64(c.CacheLineBytes), maxBytes},
		{"l1d_bytes", int64(c.L1DBytes), maxBytes}, {"l2_bytes", int64(c.L2Bytes), maxBytes}, {"l3_bytes", int64(c.L3Bytes), maxBytes},
		{"cores", int64(c.Cores), maxCount},
	}
	for _, f := range counts {
		if f.v < 0 || f.v > f.max {
			return fmt.Errorf("%s is %d, outside [0, %d]", f.field, f.v, f.max)
		}
	}
	if c.CPUs != "" {
		n, ok := listed[c.CPUs]
		if !ok {
			cpus, err := affinity.Parse(c.CPUs)
			if err != nil {
				return fmt.Errorf("cpus: %v", err)
			}
			n = len(cpus)
			if listed != nil {
				listed[c.CPUs] = n
			}
		}
		if n != c.Cores {
			return fmt.Errorf("cpus %q lists %d CPUs but cores is %d", c.CPUs, n, c.Cores)
		}
	}
	return nil
}

// checkName checks a possibly empty name: valid UTF-8, printable, at most
// MaxNameBytes bytes, no leading or trailing space.
func checkName(field, s string) error {
	switch {
	case len(s) > MaxNameBytes:
		return fmt.Errorf("%s is %d bytes long, more than the limit of %d", field, len(s), MaxNameBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s %q is not valid UTF-8", field, s)
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("%s %q has leading or trailing space", field, s)
	}
	for _, r := range s {
		if r == utf8.RuneError {
			return fmt.Errorf("%s %q contains U+FFFD, the mark of a bad encoding", field, s)
		}
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%s %q contains the unprintable character %U", field, s, r)
		}
	}
	return nil
}
