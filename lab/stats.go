//go:build linux

package lab

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// PathStats are the counters of one direction of a path, since the lab
// came up (EmuDrops: since the path was last shaped or cut).
type PathStats struct {
	Path Path
	Dir  Dir
	// State is "up", "down" (carrier cut) or "silent" (silent cut).
	State string
	// TxPackets and TxBytes left the sending router on this link;
	// RxPackets arrived at the other router.
	TxPackets, TxBytes, RxPackets uint64
	// TbfDrops were dropped by the rate limiter's full queue.
	TbfDrops uint64
	// EmuDrops were dropped by the emulation: random loss and silent cut.
	EmuDrops uint64
	// PrioPackets were marked Spec.PriorityDSCP and went to the rate
	// limiter's priority band (0 with the band off or no rate).
	PrioPackets uint64
	// Shape is the direction's emulation.
	Shape Shape
}

// Stats returns the counters of every path, in both directions.
func (l *Lab) Stats(ctx context.Context) ([]PathStats, error) {
	type routerCounters struct {
		links map[string]linkCounters
		tbf   map[string]uint64
		emu   map[string]uint64
		prio  map[string]uint64
	}
	rc := make([]routerCounters, len(l.plan.routers))
	for i, r := range l.plan.routers {
		out, err := run(ctx, "", "ip", "-n", r.NS, "-j", "-s", "link", "show")
		if err != nil {
			return nil, err
		}
		if rc[i].links, err = parseLinkStats(out); err != nil {
			return nil, err
		}
		if out, err = run(ctx, "", "tc", "-n", r.NS, "-j", "-s", "qdisc", "show"); err != nil {
			return nil, err
		}
		if rc[i].tbf, err = parseTbfDrops(out); err != nil {
			return nil, err
		}
		if out, err = run(ctx, "", "ip", "netns", "exec", r.NS, iptablesSave, "-c", "-t", "mangle"); err != nil {
			return nil, err
		}
		if rc[i].emu, err = parseChainDrops(bytes.NewReader(out)); err != nil {
			return nil, err
		}
		if rc[i].prio, err = parseChainPrio(bytes.NewReader(out)); err != nil {
			return nil, err
		}
	}
	var stats []PathStats
	err := l.locked(func() error {
		for _, p := range l.plan.paths {
			ps := l.st.Paths[p.String()]
			for _, d := range []Dir{Fwd, Rev} {
				from, to := l.plan.egress(p, d)
				f, t := rc[from.router.Site-1], rc[to.router.Site-1]
				state := "up"
				if ps.Cut != cutNone {
					state = ps.Cut
				}
				stats = append(stats, PathStats{
					Path: p, Dir: d, State: state,
					TxPackets: f.links[from.ifname].Tx.Packets, TxBytes: f.links[from.ifname].Tx.Bytes,
					RxPackets: t.links[to.ifname].Rx.Packets,
					TbfDrops:  f.tbf[from.ifname], EmuDrops: f.emu[chain(from.ifname)],
					PrioPackets: f.prio[chain(from.ifname)],
					Shape:       ps.Shape[d],
				})
			}
		}
		return nil
	})
	return stats, err
}

// FormatStats writes stats as a table, one line per path and direction.
func FormatStats(w io.Writer, stats []PathStats) {
	fmt.Fprintf(w, "%-10s %-3s %-6s %10s %13s %10s %8s %8s %8s %8s %7s %6s %10s\n",
		"path", "dir", "state", "tx_pkts", "tx_bytes", "rx_pkts", "tbf_drop", "emu_drop", "rate_mb", "delay_ms", "jit_ms", "loss%", "prio_pkts")
	for _, s := range stats {
		fmt.Fprintf(w, "%-10s %-3s %-6s %10d %13d %10d %8d %8d %8g %8g %7g %6g %10d\n",
			s.Path, s.Dir, s.State, s.TxPackets, s.TxBytes, s.RxPackets, s.TbfDrops, s.EmuDrops,
			s.Shape.RateMbit, s.Shape.DelayMS, s.Shape.JitterMS, s.Shape.LossPct, s.PrioPackets)
	}
}

// linkCounters are an interface's counters in `ip -j -s link show`.
type linkCounters struct {
	Rx, Tx struct {
		Bytes   uint64 `json:"bytes"`
		Packets uint64 `json:"packets"`
	}
}

// parseLinkStats reads `ip -j -s link show` output: counters by interface.
func parseLinkStats(data []byte) (map[string]linkCounters, error) {
	var links []struct {
		Name    string       `json:"ifname"`
		Stats64 linkCounters `json:"stats64"`
	}
	if err := json.Unmarshal(data, &links); err != nil {
		return nil, fmt.Errorf("lab: ip link output: %w", err)
	}
	out := make(map[string]linkCounters, len(links))
	for _, l := range links {
		out[l.Name] = l.Stats64
	}
	return out, nil
}

// parseTbfDrops reads `tc -j -s qdisc show` output: the drops of each
// interface's token bucket.
func parseTbfDrops(data []byte) (map[string]uint64, error) {
	var qdiscs []struct {
		Kind  string `json:"kind"`
		Dev   string `json:"dev"`
		Drops uint64 `json:"drops"`
	}
	if err := json.Unmarshal(data, &qdiscs); err != nil {
		return nil, fmt.Errorf("lab: tc qdisc output: %w", err)
	}
	out := map[string]uint64{}
	for _, q := range qdiscs {
		if q.Kind == "tbf" {
			out[q.Dev] += q.Drops
		}
	}
	return out, nil
}

// parseChainDrops reads `iptables-save -c` output: the packets each chain's
// DROP rules dropped, by chain. Lines look like
// "[12:3456] -A GL-s2p1 -m comment --comment cut -j DROP".
func parseChainDrops(r io.Reader) (map[string]uint64, error) {
	return parseChainRules(r, func(rule string) bool { return strings.HasSuffix(rule, " -j DROP") })
}

// parseChainPrio reads `iptables-save -c` output: the packets each chain
// put in the priority band (its rule commented "prio"), by chain.
func parseChainPrio(r io.Reader) (map[string]uint64, error) {
	return parseChainRules(r, func(rule string) bool { return strings.Contains(rule, " --comment prio ") })
}

// parseChainRules sums, by chain, the packet counters of the rules of
// `iptables-save -c` output that match.
func parseChainRules(r io.Reader, match func(rule string) bool) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(io.LimitReader(r, 16<<20))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "[") || !match(line) {
			continue
		}
		counts, rule, ok := strings.Cut(line[1:], "] ")
		if !ok {
			return nil, fmt.Errorf("lab: iptables-save line %q", line)
		}
		pkts, _, ok := strings.Cut(counts, ":")
		n, err := strconv.ParseUint(pkts, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("lab: iptables-save counters in %q", line)
		}
		f := strings.Fields(rule)
		if len(f) < 2 || f[0] != "-A" {
			continue
		}
		out[f[1]] += n
	}
	return out, sc.Err()
}

// Route returns the path that router of src's site sends a packet of the
// flow src:sport -> dst:dport (proto "udp" or "tcp") over. src and dst are
// node names or addresses of hosts in different sites. Replies are hashed
// by the other router, independently.
func (l *Lab) Route(ctx context.Context, src, dst string, sport, dport uint16, proto string) (Path, error) {
	if proto != "udp" && proto != "tcp" {
		return Path{}, fmt.Errorf("lab: protocol %q: want udp or tcp", proto)
	}
	s, err := l.hostByNameOrAddr(src)
	if err != nil {
		return Path{}, err
	}
	d, err := l.hostByNameOrAddr(dst)
	if err != nil {
		return Path{}, err
	}
	if s.Site == d.Site {
		return Path{}, fmt.Errorf("lab: %s and %s are in the same site: no path between them", s.Name, d.Name)
	}
	r := l.plan.routers[s.Site-1]
	out, err := run(ctx, "", "ip", "-n", r.NS, "-j", "route", "get", d.Addr.String(), "from", s.Addr.String(), "iif", "lan",
		"ipproto", proto, "sport", strconv.Itoa(int(sport)), "dport", strconv.Itoa(int(dport)))
	if err != nil {
		return Path{}, err
	}
	dev, err := parseRouteGetDev(out)
	if err != nil {
		return Path{}, err
	}
	p, ok := l.plan.pathOf(s.Site, dev)
	if !ok {
		return Path{}, fmt.Errorf("lab: %s routes %s over %q, not a path", r.Name, d.Addr, dev)
	}
	return p, nil
}

func (l *Lab) hostByNameOrAddr(s string) (Node, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		for _, h := range l.plan.hosts {
			if h.Addr == a {
				return h, nil
			}
		}
		return Node{}, fmt.Errorf("lab %s has no host at %s", l.Name(), a)
	}
	n, err := l.plan.node(s)
	if err == nil && n.Host == 0 {
		return Node{}, fmt.Errorf("lab: %s is a router, not a host", s)
	}
	return n, err
}

// parseRouteGetDev reads the output interface of `ip -j route get`.
func parseRouteGetDev(data []byte) (string, error) {
	var routes []struct {
		Dev string `json:"dev"`
	}
	if err := json.Unmarshal(data, &routes); err != nil {
		return "", fmt.Errorf("lab: ip route get output: %w", err)
	}
	if len(routes) == 0 || routes[0].Dev == "" {
		return "", fmt.Errorf("lab: ip route get gave no device")
	}
	return routes[0].Dev, nil
}
