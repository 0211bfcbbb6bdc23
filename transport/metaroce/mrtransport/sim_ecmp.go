package mrtransport

import (
	"fmt"
	"net/netip"

	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// MaxSimECMPLinks is the most links of a SimECMP.
const MaxSimECMPLinks = 64

// SimECMP makes a SimNet an ECMP fabric: every ordered pair of ranks is
// joined by Links links of its own (one direction each), shared by all the
// datagrams between them, and a datagram takes the link its source and
// destination addresses and ports hash to (a seeded hash, as a router's),
// so two path sockets may land on one link and share its queue, and a
// re-picked port (a fresh one: with ECMP every socket opened gets a port
// never used before) may land elsewhere.
type SimECMP struct {
	// Links is the number of links per direction between two ranks, 1 to
	// MaxSimECMPLinks.
	Links int
	// Link configures every link.
	Link simfabric.LinkConfig
	// Seed seeds the hash.
	Seed uint64
	// Site, if not nil, puts ranks in sites: every ordered pair of sites
	// (a site with itself included) shares one set of Links links, as the
	// lab's routers do, so the connections of all the ranks of a site to
	// another site compete on the same links. nil: every rank is a site of
	// its own (each pair of ranks has links of its own).
	Site func(rank int) int
	// Local, if not nil, configures the links between two ranks of one
	// site (a LAN, or shared memory), instead of Link.
	Local *simfabric.LinkConfig
	// Bypass, if positive, lets datagrams of at most Bypass bytes (ACKs,
	// probes) skip the links: each socket pair sends them over a path of
	// its own with Link's delay (Local's within a site) and no rate or queue, as a network that
	// serves them first would. A diagnostic of what their wait behind data
	// costs; a FIFO (the lab's tbf, most routers) has no such lane.
	Bypass int
	// Priority, if not 0, is a DSCP the links serve first (strict
	// priority, as a DiffServ router's or the lab's prio band): datagrams
	// marked with it (Message.Class; Config.ControlDSCP marks the control
	// datagrams) take, as with Bypass, a path of their own with Link's
	// (or Local's) delay and no queue. That leaves out the link time they take from the
	// data behind them (an ACK is about 1 % of a 9000-byte datagram).
	// 0: one FIFO for all classes.
	Priority uint8
	// Balanced, a diagnostic, replaces the hash: a socket of path index
	// i takes link i mod Links whatever its port, so every connection of
	// Links or a multiple of Links paths spreads them evenly over the
	// links, as no hash promises, and re-picks do not move them.
	Balanced bool
	// Place, a diagnostic, if not nil, replaces the hash (and Balanced):
	// a socket of rank rank and path index path takes link
	// Place(rank, path) mod Links, whatever its port.
	Place func(rank, path int) int
	// HashLocal, a diagnostic, keeps the hash between two ranks of one
	// site whatever Balanced and Place say (they then place the paths
	// between sites only).
	HashLocal bool
}

// site returns rank's site.
func (c *SimECMP) site(rank int) int {
	if c.Site == nil {
		return rank
	}
	return c.Site(rank)
}

func (c *SimECMP) check() error {
	if c != nil && (c.Links < 1 || c.Links > MaxSimECMPLinks) {
		return fmt.Errorf("mrtransport: SimECMP.Links=%d not in [1, %d]", c.Links, MaxSimECMPLinks)
	}
	if c != nil && c.Priority > 63 {
		return fmt.Errorf("mrtransport: SimECMP.Priority=%d not a DSCP (0 to 63)", c.Priority)
	}
	return nil
}

// ecmpState is a SimNet's ECMP links and port counter, guarded by its mu.
type ecmpState struct {
	links  map[[2]int][]simfabric.LinkID          // by (from site, to site)
	bypass map[[2]netip.AddrPort]simfabric.PathID // by (from, to) socket, see SimECMP.Bypass
	opens  int                                    // sockets opened
}

// freshAddr returns an address for rank's new socket of path index path,
// with a port never handed out before.
func (e *ecmpState) freshAddr(rank, path int) netip.AddrPort {
	e.opens++
	a := simAddr(rank, 0)
	return netip.AddrPortFrom(a.Addr(), uint16(20000+e.opens%40000))
}

// ECMPLink returns the link index (0 to Links-1) a datagram from src to dst
// takes.
func (c *SimECMP) ECMPLink(src, dst netip.AddrPort) int {
	h := c.Seed ^ 0x9e3779b97f4a7c15
	for _, v := range []netip.AddrPort{src, dst} {
		b := v.Addr().As16()
		for _, x := range b {
			h = mix64(h ^ uint64(x))
		}
		h = mix64(h ^ uint64(v.Port()))
	}
	return int(h % uint64(c.Links))
}

// mix64 is splitmix64's finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// ecmpPath makes the fabric path from socket s to dst over the link they
// hash to, making the pair's links first if need be. The caller holds mu.
func (n *SimNet) ecmpPath(s, dst *simSocket) (simfabric.PathID, error) {
	c, e := n.cfg.ECMP, &n.ecmp
	if e.links == nil {
		e.links = make(map[[2]int][]simfabric.LinkID)
	}
	pair := [2]int{c.site(s.rank), c.site(dst.rank)}
	ls := e.links[pair]
	if ls == nil {
		link := c.Link
		if c.Local != nil && pair[0] == pair[1] {
			link = *c.Local
		}
		for range c.Links {
			id, err := n.fab.AddLink(link)
			if err != nil {
				return 0, err
			}
			ls = append(ls, id)
		}
		e.links[pair] = ls
	}
	link := c.ECMPLink(s.addr, dst.addr)
	switch {
	case c.HashLocal && pair[0] == pair[1]:
	case c.Place != nil:
		link = (c.Place(s.rank, s.path)%c.Links + c.Links) % c.Links
	case c.Balanced:
		link = s.path % c.Links
	}
	return n.fab.AddPath(simfabric.NodeID(s.rank), simfabric.NodeID(dst.rank), ls[link])
}

// bypassPath returns the path datagrams of at most ECMP.Bypass bytes, or
// of class ECMP.Priority, take
// from socket s to dst, making it first if need be. The caller holds mu.
func (n *SimNet) bypassPath(s, dst *simSocket) (simfabric.PathID, error) {
	e := &n.ecmp
	key := [2]netip.AddrPort{s.addr, dst.addr}
	if p, ok := e.bypass[key]; ok {
		return p, nil
	}
	c := n.cfg.ECMP
	delay := c.Link.Delay
	if c.Local != nil && c.site(s.rank) == c.site(dst.rank) {
		delay = c.Local.Delay
	}
	p, _, err := n.fab.Connect(simfabric.NodeID(s.rank), simfabric.NodeID(dst.rank), simfabric.LinkConfig{Delay: delay})
	if err != nil {
		return 0, err
	}
	if e.bypass == nil {
		e.bypass = make(map[[2]netip.AddrPort]simfabric.PathID)
	}
	e.bypass[key] = p
	n.dest = append(n.dest, dst) // fabric paths are numbered in order
	n.src = append(n.src, s.addr)
	return p, nil
}

// ECMPLinkBytes returns the bytes that have left each ECMP link from rank
// from's site to rank to's (nil if none was made, or without ECMP).
func (n *SimNet) ECMPLinkBytes(from, to int) []int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cfg.ECMP == nil {
		return nil
	}
	ls := n.ecmp.links[[2]int{n.cfg.ECMP.site(from), n.cfg.ECMP.site(to)}]
	if ls == nil {
		return nil
	}
	st := n.fab.Stats()
	out := make([]int64, len(ls))
	for i, id := range ls {
		out[i] = st.Links[id].Delivered.Bytes
	}
	return out
}
