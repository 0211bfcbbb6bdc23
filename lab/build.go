//go:build linux

package lab

import (
	"context"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sync/errgroup"
)

// The lab drives the legacy iptables: this kernel's nftables cannot queue
// packets to userspace (no CONFIG_NFT_QUEUE), which the delay needs.
const (
	iptablesRestore = "iptables-legacy-restore"
	iptablesSave    = "iptables-legacy-save"
)

// build creates the lab's namespaces, links, addresses, routes and
// emulation, and starts the delay daemons it needs. On error the caller
// tears down.
func (l *Lab) build(ctx context.Context) error {
	p := l.plan
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return fmt.Errorf("lab %s: %w", l.Name(), err)
	}
	if err := l.saveState(); err != nil {
		return err
	}
	var g errgroup.Group
	g.SetLimit(4)
	for _, n := range p.nodes() {
		g.Go(func() error { return addNetns(ctx, n.NS) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, r := range p.routers {
		g.Go(func() error {
			return inNetns(r.NS, func() error {
				if err := setSysctls(l.routerSysctls()); err != nil {
					return err
				}
				return setSysctls(bridgeSysctls())
			})
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// Links first (a veth's creation names both namespaces), then each
	// namespace's addresses and routes.
	for _, r := range p.routers {
		g.Go(func() error { return batch(ctx, "ip", r.NS, l.routerLinks(r)) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, r := range p.routers {
		g.Go(func() error { return batch(ctx, "ip", r.NS, l.routerConfig(r)) })
	}
	for _, h := range p.hosts {
		g.Go(func() error { return batch(ctx, "ip", h.NS, hostConfig(h)) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, r := range p.routers { // one at a time: each may record its delay daemon in l.st
		if err := l.setupRouterEmulation(ctx, r); err != nil {
			return err
		}
	}
	if err := l.segmentHosts(ctx); err != nil {
		return err
	}
	return l.saveState()
}

// segmentHosts makes the hosts send their GSO trains as separate packets
// while a path drops packets at random, and whole otherwise. A train (a
// UDP_SEGMENT send or a TSO burst, up to 64 KB) crosses the veths and the
// router as one packet, so the router's random DROP would lose all its
// datagrams at once: with 9000-byte datagrams a 5 % loss became bursts of
// 1-7 datagrams, enough to leave a small window no acknowledgement to
// recover by. A NIC segments before the wire, where random loss hits one
// packet at a time: gso_max_segs 1 on the hosts' interfaces has the kernel
// segment there. Without loss trains stay whole, which spares the delay
// daemons a packet per datagram. The hosts are changed only when that
// turns (not on every cut or shape, which a scenario does mid-run).
func (l *Lab) segmentHosts(ctx context.Context) error {
	segs := gsoMaxSegs
	for _, ps := range l.st.Paths {
		for _, sh := range ps.Shape {
			if sh.LossPct > 0 {
				segs = 1
			}
		}
	}
	cur := l.st.HostGSOSegs
	if cur == 0 {
		cur = gsoMaxSegs
	}
	if segs == cur {
		return nil
	}
	var g errgroup.Group
	g.SetLimit(4)
	for _, h := range l.plan.hosts {
		g.Go(func() error {
			return batch(ctx, "ip", h.NS, []string{fmt.Sprintf("link set eth0 gso_max_segs %d", segs)})
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	l.st.HostGSOSegs = segs
	return nil
}

// gsoMaxSegs is a veth's default gso_max_segs (the kernel's GSO_MAX_SEGS).
const gsoMaxSegs = 65535

// bridgeSysctls keeps the router's firewall off the frames its site bridge
// switches between hosts, as a site's switch does: where br_netfilter is
// loaded (the machine's, e.g. by a container runtime), every bridged frame
// in a new namespace would pass iptables' hooks, which cost the hosts' CPU
// per LAN packet (~14 CPU-ms a 16 MiB hierarchical AllReduce in issue 14's
// lab, from bench/results/cpu_lab/cpu29's profile: br_nf_pre_routing) and
// which no rule of the lab needs (its emulation chains match the WAN
// paths' egress, routed, not bridged). None where the module is absent:
// then bridged frames skip iptables anyway.
func bridgeSysctls() [][2]string {
	if _, err := os.Stat("/proc/sys/net/bridge"); err != nil {
		return nil
	}
	var kv [][2]string
	for _, k := range []string{"iptables", "ip6tables", "arptables"} {
		kv = append(kv, [2]string{"net/bridge/bridge-nf-call-" + k, "0"})
	}
	return kv
}

// routerSysctls: forwarding, ECMP hashed on the 5-tuple, routes over a
// link that is down skipped, no reverse-path filter (paths are
// asymmetric).
func (l *Lab) routerSysctls() [][2]string {
	policy := "1"
	if l.plan.spec.L3Hash {
		policy = "0"
	}
	kv := [][2]string{
		{"net/ipv4/ip_forward", "1"},
		{"net/ipv4/fib_multipath_hash_policy", policy},
		{"net/ipv4/fib_multipath_use_neigh", "1"},
		{"net/ipv4/conf/all/ignore_routes_with_linkdown", "1"},
		{"net/ipv4/conf/default/ignore_routes_with_linkdown", "1"},
		{"net/ipv4/conf/all/rp_filter", "0"},
		{"net/ipv4/conf/default/rp_filter", "0"},
	}
	if l.plan.spec.Seed != 0 {
		kv = append(kv, [2]string{"net/ipv4/fib_multipath_hash_seed", fmt.Sprint(l.plan.spec.Seed)})
	}
	return kv
}

// routerLinks creates the site's bridge, its hosts' veths and the veths of
// the paths to higher-numbered sites.
func (l *Lab) routerLinks(r Node) []string {
	p := l.plan
	mtu := p.spec.MTU
	lines := []string{fmt.Sprintf("link add lan mtu %d type bridge", mtu)}
	for _, h := range p.hosts {
		if h.Site == r.Site {
			lines = append(lines, fmt.Sprintf("link add h%d mtu %d type veth peer name eth0 mtu %d netns %s", h.Host, mtu, mtu, h.NS))
		}
	}
	for _, pa := range p.paths {
		if pa.A != r.Site {
			continue
		}
		a, b := p.ends(pa)
		lines = append(lines, fmt.Sprintf("link add %s address %s mtu %d type veth peer name %s address %s mtu %d netns %s",
			a.ifname, a.mac, mtu, b.ifname, b.mac, mtu, b.router.NS))
	}
	return lines
}

// routerConfig addresses the router's links, sets permanent neighbours on
// the paths (no ARP in the counters) and routes each other site over its
// paths, ECMP when there are several.
func (l *Lab) routerConfig(r Node) []string {
	p := l.plan
	lines := []string{"link set lo up", fmt.Sprintf("addr add %s/24 dev lan", r.Addr), "link set lan up"}
	for _, h := range p.hosts {
		if h.Site == r.Site {
			lines = append(lines, fmt.Sprintf("link set h%d master lan", h.Host), fmt.Sprintf("link set h%d up", h.Host))
		}
	}
	hops := map[int][]string{} // by peer site
	for _, pa := range p.paths {
		if pa.A != r.Site && pa.B != r.Site {
			continue
		}
		mine, theirs := p.ends(pa)
		if pa.B == r.Site {
			mine, theirs = theirs, mine
		}
		lines = append(lines,
			fmt.Sprintf("addr add %s/24 dev %s", mine.addr, mine.ifname),
			fmt.Sprintf("link set %s up", mine.ifname),
			neighLine(theirs, mine))
		hops[theirs.router.Site] = append(hops[theirs.router.Site], fmt.Sprintf("nexthop via %s dev %s", theirs.addr, mine.ifname))
	}
	for site := 1; site <= p.spec.Sites; site++ {
		if site == r.Site {
			continue
		}
		dst := fmt.Sprintf("10.%d.0.0/24", site)
		if h := hops[site]; len(h) == 1 {
			lines = append(lines, fmt.Sprintf("route replace %s %s", dst, strings.TrimPrefix(h[0], "nexthop ")))
		} else {
			lines = append(lines, fmt.Sprintf("route replace %s %s", dst, strings.Join(h, " ")))
		}
	}
	return lines
}

// neighLine is the permanent neighbour entry for the far end of a path.
func neighLine(far, near end) string {
	return fmt.Sprintf("neigh replace %s lladdr %s dev %s nud permanent", far.addr, far.mac, near.ifname)
}

func hostConfig(h Node) []string {
	return []string{
		"link set lo up",
		fmt.Sprintf("addr add %s/24 dev eth0", h.Addr),
		"link set eth0 up",
		fmt.Sprintf("route add default via 10.%d.0.1", h.Site),
	}
}

// routerEnds returns the path ends in router r, with the path and the
// direction their egress is.
func (l *Lab) routerEnds(r Node) (ends []end, paths []Path, dirs []Dir) {
	for _, pa := range l.plan.paths {
		switch r.Site {
		case pa.A:
			e, _ := l.plan.egress(pa, Fwd)
			ends, paths, dirs = append(ends, e), append(paths, pa), append(dirs, Fwd)
		case pa.B:
			e, _ := l.plan.egress(pa, Rev)
			ends, paths, dirs = append(ends, e), append(paths, pa), append(dirs, Rev)
		}
	}
	return ends, paths, dirs
}

// setupRouterEmulation creates the router's per-interface iptables chains,
// hooked in mangle FORWARD (the router only forwards, and there a packet
// still carries its receive time, which the delay daemon reads from
// NFQUEUE; POSTROUTING comes after the kernel clears it), and applies
// every path's shaping there.
func (l *Lab) setupRouterEmulation(ctx context.Context, r Node) error {
	ends, _, _ := l.routerEnds(r)
	var b strings.Builder
	b.WriteString("*mangle\n")
	for _, e := range ends {
		fmt.Fprintf(&b, ":%s - [0:0]\n", chain(e.ifname))
	}
	for _, e := range ends {
		fmt.Fprintf(&b, "-A FORWARD -o %s -j %s\n", e.ifname, chain(e.ifname))
	}
	b.WriteString("COMMIT\n")
	if err := iptablesApply(ctx, r.NS, b.String()); err != nil {
		return err
	}
	return l.applyRouter(ctx, r, nil, nil)
}

// iptablesApply feeds rules to iptables-restore in namespace ns, leaving
// the chains it does not name alone.
func iptablesApply(ctx context.Context, ns, rules string) error {
	_, err := run(ctx, rules, "ip", "netns", "exec", ns, iptablesRestore, "-w", "--noflush")
	return err
}
