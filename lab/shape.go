//go:build linux

package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// applyRouter applies the shaping and cuts of every path end in router r:
// a token bucket on the egress for the rate (removed where hadRate says
// there was one, its rate, and the rate is now 0), and in the end's iptables chain a
// DROP for a silent cut, a random DROP for loss and an NFQUEUE to the
// router's delay daemon for delay and jitter. With only set, the qdiscs
// and chains of the other paths are left alone (and their counters kept).
func (l *Lab) applyRouter(ctx context.Context, r Node, hadRate map[string]float64, only *Path) error {
	ends, paths, dirs := l.routerEnds(r)
	var tc, links []string
	var ipt strings.Builder
	dscp := l.plan.spec.PriorityDSCP
	ipt.WriteString("*mangle\n")
	var delays []delaydQueue
	anyDelay := false
	for i, e := range ends {
		ps := l.st.Paths[paths[i].String()]
		sh := ps.Shape[dirs[i]]
		delays = append(delays, delaydQueue{Queue: e.queue, Delay: ms(sh.DelayMS), Jitter: ms(sh.JitterMS)})
		anyDelay = anyDelay || sh.delayed()
		if only != nil && *only != paths[i] {
			continue
		}
		switch {
		case sh.RateMbit > 0:
			burst, limit := tbf(sh.RateMbit, l.plan.spec.MTU, l.plan.spec.QueueMS)
			tc = append(tc, fmt.Sprintf("qdisc replace dev %s root handle 1: tbf rate %dbit burst %d limit %d",
				e.ifname, int64(sh.RateMbit*1e6), burst, limit))
			if dscp > 0 {
				// pfifo_fast's bands hold txqueuelen packets each: the
				// data band as many full packets as tbf's limit.
				// pfifo_fast reads txqueuelen only when it is made, and a
				// tbf that was there keeps its child: remake the band when
				// the rate changed (which drops its queue), only then.
				links = append(links, fmt.Sprintf("link set dev %s txqueuelen %d", e.ifname, max(limit/l.plan.spec.MTU, 2)))
				if old := hadRate[e.ifname]; old > 0 && old != sh.RateMbit {
					tc = append(tc, fmt.Sprintf("qdisc del dev %s parent 1:1 handle 10:", e.ifname))
				}
				tc = append(tc, fmt.Sprintf("qdisc replace dev %s parent 1:1 handle 10: pfifo_fast", e.ifname))
			}
		case hadRate[e.ifname] > 0:
			tc = append(tc, fmt.Sprintf("qdisc del dev %s root", e.ifname))
			if dscp > 0 {
				links = append(links, fmt.Sprintf("link set dev %s txqueuelen %d", e.ifname, vethTxQueueLen))
			}
		}
		c := chain(e.ifname)
		fmt.Fprintf(&ipt, "-F %s\n", c)
		if ps.Cut == cutSilent {
			fmt.Fprintf(&ipt, "-A %s -m comment --comment cut -j DROP\n", c)
		}
		if dscp > 0 && sh.RateMbit > 0 {
			// skb priority 7 (TC_PRIO_CONTROL) is pfifo_fast's band 0,
			// 0 its band 1; set both so a packet's own TOS bits (which
			// the router maps to a priority) do not choose.
			fmt.Fprintf(&ipt, "-A %s -m dscp --dscp %d -m comment --comment prio -j CLASSIFY --set-class 0:7\n", c, dscp)
			fmt.Fprintf(&ipt, "-A %s -m dscp ! --dscp %d -m comment --comment data -j CLASSIFY --set-class 0:0\n", c, dscp)
		}
		if sh.LossPct > 0 {
			fmt.Fprintf(&ipt, "-A %s -m statistic --mode random --probability %.6f -m comment --comment loss -j DROP\n", c, sh.LossPct/100)
		}
		if sh.delayed() {
			fmt.Fprintf(&ipt, "-A %s -m comment --comment delay -j NFQUEUE --queue-num %d\n", c, e.queue)
		}
	}
	ipt.WriteString("COMMIT\n")
	if err := batch(ctx, "ip", r.NS, links); err != nil {
		return err
	}
	if err := batch(ctx, "tc", r.NS, tc); err != nil {
		return err
	}
	// The daemon holds the new delays before packets are queued to it.
	if anyDelay || l.st.Delayd[r.Name] != 0 {
		if err := l.ensureDelayd(ctx, r, delays); err != nil {
			return err
		}
	}
	return iptablesApply(ctx, r.NS, ipt.String())
}

// vethTxQueueLen is a veth's txqueuelen as the kernel makes it, given
// back when a path end loses its rate (and its band).
const vethTxQueueLen = 1000

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// rated returns the interfaces of router r that have a token bucket now,
// with its rate in Mbit/s.
func (l *Lab) rated(r Node) map[string]float64 {
	out := map[string]float64{}
	ends, paths, dirs := l.routerEnds(r)
	for i, e := range ends {
		if rate := l.st.Paths[paths[i].String()].Shape[dirs[i]].RateMbit; rate > 0 {
			out[e.ifname] = rate
		}
	}
	return out
}

// update changes path p's state with change, applies it to both routers
// and saves the state.
func (l *Lab) update(ctx context.Context, p Path, change func(ps *pathState) error) error {
	if err := l.checkPath(p); err != nil {
		return err
	}
	if err := checkRoot(); err != nil {
		return err
	}
	routers := []Node{l.plan.routers[p.A-1], l.plan.routers[p.B-1]}
	had := make([]map[string]float64, len(routers))
	for i, r := range routers {
		had[i] = l.rated(r)
	}
	ps := l.st.Paths[p.String()]
	old := *ps
	if err := change(ps); err != nil {
		*ps = old
		return err
	}
	for i, r := range routers {
		if err := l.applyRouter(ctx, r, had[i], &p); err != nil {
			return err
		}
	}
	if err := l.segmentHosts(ctx); err != nil {
		return err
	}
	return l.saveState()
}

func (l *Lab) checkPath(p Path) error {
	if l.st.Paths[p.String()] == nil {
		return fmt.Errorf("lab %s has no path %s", l.Name(), p)
	}
	return nil
}

// Shape sets the emulation of path p in the directions dirs.
func (l *Lab) Shape(ctx context.Context, p Path, dirs []Dir, sh Shape) error {
	if err := sh.check(); err != nil {
		return fmt.Errorf("lab %s: path %s: %w", l.Name(), p, err)
	}
	return l.locked(func() error {
		return l.update(ctx, p, func(ps *pathState) error {
			for _, d := range dirs {
				if d != Fwd && d != Rev {
					return fmt.Errorf("bad direction %d", d)
				}
				ps.Shape[d] = sh
			}
			return nil
		})
	})
}

// Shaping returns path p's emulation in direction d.
func (l *Lab) Shaping(p Path, d Dir) (Shape, error) {
	var sh Shape
	err := l.locked(func() error {
		if err := l.checkPath(p); err != nil {
			return err
		}
		sh = l.st.Paths[p.String()].Shape[d&1]
		return nil
	})
	return sh, err
}

// Cut cuts path p. A silent cut drops every packet both ways while the
// routers still use the path (a gray failure the transport must find
// itself); otherwise the link goes down and the routers move its flows to
// the other paths (and, hashing anew, some other flows too).
func (l *Lab) Cut(ctx context.Context, p Path, silent bool) error {
	return l.locked(func() error { return l.cut(ctx, p, silent) })
}

func (l *Lab) cut(ctx context.Context, p Path, silent bool) error {
	if err := l.restore(ctx, p); err != nil {
		return err
	}
	return l.update(ctx, p, func(ps *pathState) error {
		if silent {
			ps.Cut = cutSilent
			return nil
		}
		a, _ := l.plan.ends(p)
		if err := batch(ctx, "ip", a.router.NS, []string{fmt.Sprintf("link set %s down", a.ifname)}); err != nil {
			return err
		}
		ps.Cut = cutDown
		return nil
	})
}

// Restore undoes a cut of path p and, for a link that was down, waits
// until both routers route over it again.
func (l *Lab) Restore(ctx context.Context, p Path) error {
	return l.locked(func() error { return l.restore(ctx, p) })
}

func (l *Lab) restore(ctx context.Context, p Path) error {
	if err := l.checkPath(p); err != nil {
		return err
	}
	switch l.st.Paths[p.String()].Cut {
	case cutNone:
		return nil
	case cutSilent:
		return l.update(ctx, p, func(ps *pathState) error { ps.Cut = cutNone; return nil })
	}
	a, b := l.plan.ends(p)
	for _, e := range [][2]end{{a, b}, {b, a}} {
		if err := batch(ctx, "ip", e[0].router.NS, []string{fmt.Sprintf("link set %s up", e[0].ifname), neighLine(e[1], e[0])}); err != nil {
			return err
		}
	}
	if err := l.update(ctx, p, func(ps *pathState) error { ps.Cut = cutNone; return nil }); err != nil {
		return err
	}
	return l.waitRouted(ctx, p, 10*time.Second)
}

// waitRouted waits until both routers' routes to each other's site use
// path p's link with neither "dead" nor "linkdown".
func (l *Lab) waitRouted(ctx context.Context, p Path, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	a, b := l.plan.ends(p)
	for {
		okA, errA := nexthopLive(ctx, a, b.router.Site)
		okB, errB := nexthopLive(ctx, b, a.router.Site)
		if errA == nil && errB == nil && okA && okB {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("lab %s: path %s not routed again within %v (%v %v)", l.Name(), p, limit, errA, errB)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// nexthopLive says whether router e's route to site uses e's interface
// and it is live.
func nexthopLive(ctx context.Context, e end, site int) (bool, error) {
	out, err := run(ctx, "", "ip", "-n", e.router.NS, "-j", "route", "show", fmt.Sprintf("10.%d.0.0/24", site))
	if err != nil {
		return false, err
	}
	hops, err := parseRouteHops(out)
	if err != nil {
		return false, err
	}
	for _, h := range hops {
		if h.Dev == e.ifname {
			return !h.has("dead") && !h.has("linkdown"), nil
		}
	}
	return false, nil
}

// routeHop is one next hop of a route in `ip -j route show`.
type routeHop struct {
	Dev   string   `json:"dev"`
	Flags []string `json:"flags"`
}

func (h routeHop) has(flag string) bool {
	for _, f := range h.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

// parseRouteHops reads the next hops of the routes in `ip -j route show`
// output: a single route's dev, or a multipath route's nexthops.
func parseRouteHops(data []byte) ([]routeHop, error) {
	var routes []struct {
		routeHop
		Nexthops []routeHop `json:"nexthops"`
	}
	if err := json.Unmarshal(data, &routes); err != nil {
		return nil, fmt.Errorf("lab: ip route output: %w", err)
	}
	var hops []routeHop
	for _, r := range routes {
		if len(r.Nexthops) > 0 {
			hops = append(hops, r.Nexthops...)
		} else if r.Dev != "" {
			hops = append(hops, r.routeHop)
		}
	}
	return hops, nil
}
