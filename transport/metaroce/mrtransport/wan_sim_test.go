package mrtransport

import (
	"context"
	"fmt"
	"github.com/stretchr/testify/require"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// wanSimLink is one WAN link of issue 14's two-site lab: 200 Mbit/s, 2 ms
// one way, a 20 ms queue (the lab's tbf).
var wanSimLink = simfabric.LinkConfig{Rate: 25_000_000, Delay: 2 * time.Millisecond, QueueBytes: 500_000}

// wanSim describes the WAN phase of the lab's hierarchical AllReduce: pairs
// ranks on each of two sites, rank i of site 0 exchanging bytes each way
// with rank i of site 1 (only site 0 sending if oneWay) as msgs messages
// posted at once, calls times with gap of idle before each; the sites
// joined by links links like link, shared by every connection (ECMP on the
// 5-tuple, hash seeded by seed), as the lab's routers share theirs.
type wanSim struct {
	pairs, msgs, calls, links int
	bytes                     int
	gap                       time.Duration
	link                      simfabric.LinkConfig
	seed                      uint64
	cfg                       Config
	oneWay                    bool
	bypass                    int    // SimECMP.Bypass
	priority                  uint8  // SimECMP.Priority
	series                    string // "links" or "conns": log the last call's link use per 2 ms, or each connection's rate and the paths' events per 5 ms
	balanced                  bool   // SimECMP.Balanced: every connection's paths spread evenly over the links
	ends                      bool   // log each call's ranks' completion times
}

// wanSimResult is what a wanSim run measured.
type wanSimResult struct {
	calls  []time.Duration // each call's virtual time, first post to last completion
	spread []time.Duration // each call's first rank to finish to its last
	bound  time.Duration   // the links' bound on one call: pairs*bytes per direction over their total rate
	linkB  []int64         // bytes each link from site 0 to site 1 carried
	// Over all connections' paths: retransmission timeouts (and of them
	// spurious), packets declared lost, window cuts by signal (ECN, loss,
	// delay); and the links' tail drops.
	timeouts, spurious, lost int64
	cuts                     [3]int64
	tailDrops                int64
	repicks                  int64 // port re-picks made, over all endpoints
}

// run runs s in a synctest bubble of its own.
func (s wanSim) run(t *testing.T) wanSimResult {
	var r wanSimResult
	synctest.Test(t, func(t *testing.T) { r = s.bubble(t) })
	return r
}

func (s wanSim) bubble(t *testing.T) wanSimResult {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	cfg := s.cfg
	cfg.ListenAddr = netip.MustParseAddrPort("10.0.0.1:0") // not loopback: NIC defaults, re-picks on
	if cfg.MaxDatagram == 0 {
		cfg.MaxDatagram = 8972
	}
	cfg.Core.IDSeed = s.seed | 1
	ecmp := &SimECMP{Links: s.links, Link: s.link, Seed: s.seed, Site: func(r int) int { return r / s.pairs }, Bypass: s.bypass,
		Priority: s.priority, Balanced: s.balanced}
	eps, net, err := NewSimWorld(ctx, 2*s.pairs, cfg, SimConfig{Fabric: simfabric.Config{Seed: int64(s.seed)}, ECMP: ecmp})
	if err != nil {
		t.Fatalf("seed %d: %v", s.seed, err)
	}
	defer net.Close()
	defer func() {
		for _, ep := range eps {
			_ = ep.Close()
		}
	}()
	res := wanSimResult{bound: time.Duration(float64(s.pairs*s.bytes) / float64(int64(s.links)*s.link.Rate) * float64(time.Second))}
	piece := s.bytes / s.msgs
	src := make([]byte, piece)
	dst := make([][]byte, 2*s.pairs*s.msgs)
	for i := range dst {
		dst[i] = make([]byte, piece)
	}
	for c := range s.calls {
		time.Sleep(s.gap)
		start := time.Now()
		var wg sync.WaitGroup
		errs := make([]error, 2*s.pairs)
		ends := make([]time.Duration, 2*s.pairs) // each rank's last completion
		for r := range 2 * s.pairs {
			peer := (r + s.pairs) % (2 * s.pairs)
			wg.Go(func() {
				reqs := make([]transport.Request, 0, 2*s.msgs)
				for m := range s.msgs {
					tag := benchTag(14, uint32(c*s.msgs+m))
					if !s.oneWay || r >= s.pairs {
						reqs = append(reqs, eps[r].Recv(peer, tag, dst[r*s.msgs+m]))
					}
					if !s.oneWay || r < s.pairs {
						reqs = append(reqs, eps[r].Send(peer, tag, src))
					}
				}
				for _, q := range reqs {
					if _, err := q.Wait(ctx); err != nil {
						errs[r] = err
						return
					}
				}
				ends[r] = time.Since(start)
			})
		}
		if s.series != "" && c == s.calls-1 {
			if s.series == "conns" {
				s.logConnSeries(t, eps, net, &wg)
			} else {
				s.logSeries(t, net, &wg)
			}
			t.Logf("seed %d, last call: each rank's last completion %v", s.seed, ends)
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("seed %d call %d: %v", s.seed, c, err)
			}
		}
		res.calls = append(res.calls, time.Since(start))
		res.spread = append(res.spread, slices.Max(ends)-slices.Min(ends))
		if s.ends {
			t.Logf("seed %d call %d: each rank's last completion %v", s.seed, c, ends)
		}
	}
	res.linkB = net.ECMPLinkBytes(0, s.pairs)
	for _, l := range net.Stats().Links {
		res.tailDrops += l.DroppedQueueFull.Packets
	}
	for _, ep := range eps {
		made, _ := ep.Repicks()
		res.repicks += made
		for _, ps := range ep.Stats().Peers {
			for _, p := range ps.Paths {
				res.timeouts += p.Timeouts
				res.spurious += p.SpuriousTimeouts
				res.lost += p.PacketsLost
				res.cuts[0] += p.CutsECN
				res.cuts[1] += p.CutsLoss
				res.cuts[2] += p.CutsDelay
			}
		}
	}
	return res
}

// logSeries logs, every 2 ms until wg is done, the share of its rate
// each link carried, site 0 to 1 then 1 to 0, and the links' tail drops.
func (s wanSim) logSeries(t *testing.T, net *SimNet, wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	const every = 2 * time.Millisecond
	prev := [2][]int64{net.ECMPLinkBytes(0, s.pairs), net.ECMPLinkBytes(s.pairs, 0)}
	drops := func() (n int64) {
		for _, l := range net.Stats().Links {
			n += l.DroppedQueueFull.Packets
		}
		return n
	}
	prevDrops := drops()
	for at := every; ; at += every {
		select {
		case <-done:
			return
		case <-time.After(every):
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%4d ms, %% of each link's rate:", at/time.Millisecond)
		for d, now := range [2][]int64{net.ECMPLinkBytes(0, s.pairs), net.ECMPLinkBytes(s.pairs, 0)} {
			if d == 1 {
				b.WriteString("  |")
			}
			for l := range now {
				fmt.Fprintf(&b, " %4.0f", 100*float64(now[l]-prev[d][l])/(float64(s.link.Rate)*every.Seconds()))
			}
			prev[d] = now
		}
		d := drops()
		fmt.Fprintf(&b, "  | tail drops %d", d-prevDrops)
		prevDrops = d
		t.Log(b.String())
	}
}

// TestWANSimTable prints, for WAN_SIM_SEEDS seeds (unset: skipped), the
// WAN phase of the lab's hierarchical 16 MiB AllReduce in virtual time,
// with MetaRoCE over a fabric that has no CPU cost: 4 pairs of ranks
// (WAN_SIM_PAIRS) across 2 sites, each exchanging 4 MiB each way
// (WAN_SIM_BYTES; WAN_SIM_ONEWAY=1: site 0 sends only) as 16 messages
// (WAN_SIM_MSGS) posted at once, 6 calls (WAN_SIM_CALLS) 20 ms apart
// (WAN_SIM_GAP_MS), over 4 links of 200 Mbit/s, 2 ms, 20 ms of queue,
// shared by all 4 connections: each call's share of the links' bound, the
// spread between the first and the last pair to finish, and the losses.
// WAN_SIM_SERIES=links logs the last call's link use every 2 ms;
// WAN_SIM_SERIES=conns each connection's rate (site 0 to 1) every 5 ms,
// with the tail drops, timeouts, losses and delay cuts in each interval. This is the
// transport's share of the lab's shortfall from issue 14's bound, apart
// from the lab's CPU (bench/results/wan_gap.md). WAN_SIM_BYPASS=600 lets
// datagrams of at most 600 bytes (ACKs) skip the links' queues
// (SimECMP.Bypass), to see what their wait behind data costs;
// WAN_SIM_PRIORITY=1 has the links serve the control datagrams' DSCP
// (Config.ControlDSCP) first (SimECMP.Priority), as the lab's prio band
// does: the figure with the control class served first and without.
// WAN_SIM_ENDS=1 logs each call's ranks' completion times (which pair is
// last, and whether it stays last from call to call); WAN_SIM_BALANCED=1
// places every connection's paths evenly over the links (SimECMP.Balanced)
// instead of by hash, so that what stays unequal is the congestion
// control's doing, not the paths' placement.
func TestWANSimTable(t *testing.T) {
	seeds, _ := strconv.Atoi(os.Getenv("WAN_SIM_SEEDS"))
	if seeds <= 0 {
		t.Skip("WAN_SIM_SEEDS unset: a table of figures, not a check")
	}
	env := func(k string, d int) int {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
			return v
		}
		return d
	}
	for seed := range uint64(seeds) {
		s := wanSim{pairs: env("WAN_SIM_PAIRS", 4), msgs: env("WAN_SIM_MSGS", 16), calls: env("WAN_SIM_CALLS", 6), links: 4,
			bytes: env("WAN_SIM_BYTES", 4<<20), gap: time.Duration(env("WAN_SIM_GAP_MS", 20)) * time.Millisecond,
			link: wanSimLink, seed: seed + 1, oneWay: os.Getenv("WAN_SIM_ONEWAY") != "", series: os.Getenv("WAN_SIM_SERIES")}
		s.cfg.Paths = env("WAN_SIM_PATHS", 0)
		s.bypass = env("WAN_SIM_BYPASS", 0)
		s.balanced, s.ends = os.Getenv("WAN_SIM_BALANCED") == "1", os.Getenv("WAN_SIM_ENDS") == "1"
		if os.Getenv("WAN_SIM_PRIORITY") == "1" {
			s.priority = DefaultControlDSCP
		}
		s.cfg.Core.MinRTO = time.Duration(env("WAN_SIM_MINRTO_US", 0)) * time.Microsecond
		s.cfg.Repick.Off = os.Getenv("WAN_SIM_REPICK") == "off"
		r := s.run(t)
		var sum float64
		for _, d := range r.calls {
			sum += r.bound.Seconds() / d.Seconds()
		}
		t.Logf("seed %d (control class first: %v): mean %.1f %% of the bound over %d calls", s.seed, s.priority != 0, 100*sum/float64(len(r.calls)), len(r.calls))
		var b strings.Builder
		fmt.Fprintf(&b, "seed %d: bound %.1f ms; calls (%% of bound, spread):", s.seed, r.bound.Seconds()*1e3)
		for i, d := range r.calls {
			fmt.Fprintf(&b, " %.0f%% %.0fms", 100*r.bound.Seconds()/d.Seconds(), r.spread[i].Seconds()*1e3)
		}
		t.Logf("%s; link bytes %v; re-picks %d; tail drops %d, lost %d, timeouts %d (spurious %d), cuts ECN/loss/delay %v",
			b.String(), r.linkB, r.repicks, r.tailDrops, r.lost, r.timeouts, r.spurious, r.cuts)
	}
}

// ecmpWorld returns n endpoints of 2 paths each over a SimNet with ecmp
// (the caller closes them, then the SimNet).
func ecmpWorld(t *testing.T, ctx context.Context, n int, ecmp *SimECMP) ([]*Endpoint, *SimNet) {
	cfg := Config{Paths: 2, ListenAddr: netip.MustParseAddrPort("10.0.0.1:0"), MaxDatagram: 8972}
	cfg.Core.IDSeed = 5
	eps, net, err := NewSimWorld(ctx, n, cfg, SimConfig{ECMP: ecmp})
	if err != nil {
		t.Fatal(err)
	}
	return eps, net
}

// TestSimECMPSitesShareLinks: with SimECMP.Site, the connections of two
// pairs of ranks from one site to another share one set of links (each
// pair's ECMPLinkBytes counts both pairs' bytes); without it, each pair
// has links of its own.
func TestSimECMPSitesShareLinks(t *testing.T) {
	for _, shared := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ecmp := &SimECMP{Links: 2, Link: wanSimLink, Seed: 3}
			if shared {
				ecmp.Site = func(r int) int { return r / 2 }
			}
			eps, net := ecmpWorld(t, ctx, 4, ecmp)
			defer net.Close()
			const size = 1 << 20
			var reqs []transport.Request
			for from := range 2 {
				reqs = append(reqs, eps[from+2].Recv(from, benchTag(15, 0), make([]byte, size)),
					eps[from].Send(from+2, benchTag(15, 0), make([]byte, size)))
			}
			for _, q := range reqs {
				if _, err := q.Wait(ctx); err != nil {
					t.Fatal(err)
				}
			}
			var sum [2]int64
			for from := range 2 {
				for _, b := range net.ECMPLinkBytes(from, from+2) {
					sum[from] += b
				}
			}
			for _, ep := range eps {
				_ = ep.Close()
			}
			if shared && (sum[0] != sum[1] || sum[0] < 2*size) {
				t.Errorf("sites share links: bytes counted for 0->2 %d and 1->3 %d, want both the same, at least %d", sum[0], sum[1], 2*size)
			}
			if !shared && (sum[0] < size || sum[0] >= 2*size || sum[1] < size || sum[1] >= 2*size) {
				t.Errorf("pairs have links of their own: 0->2 %d, 1->3 %d bytes, want each in [%d, %d)", sum[0], sum[1], size, 2*size)
			}
		})
	}
}

// TestSimECMPLocalLinks: with SimECMP.Local, two ranks of one site talk
// over links like Local (here of no rate limit), not like Link: 1 MiB
// within the site takes under 5 ms of virtual time, where 2 links of
// 25 MB/s need 21 ms.
func TestSimECMPLocalLinks(t *testing.T) {
	for _, local := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ecmp := &SimECMP{Links: 2, Link: wanSimLink, Seed: 3, Site: func(r int) int { return r / 2 }}
			if local {
				ecmp.Local = &simfabric.LinkConfig{Delay: 20 * time.Microsecond}
			}
			eps, net := ecmpWorld(t, ctx, 2, ecmp)
			defer net.Close()
			start := time.Now()
			r := eps[1].Recv(0, benchTag(16, 0), make([]byte, 1<<20))
			s := eps[0].Send(1, benchTag(16, 0), make([]byte, 1<<20))
			for _, q := range []transport.Request{r, s} {
				if _, err := q.Wait(ctx); err != nil {
					t.Fatal(err)
				}
			}
			took := time.Since(start)
			for _, ep := range eps {
				_ = ep.Close()
			}
			if fast := took < 5*time.Millisecond; fast != local {
				t.Errorf("Local set %v: 1 MiB within a site took %v", local, took)
			}
		})
	}
}

// logConnSeries logs, every 5 ms until wg is done, each connection's
// arrivals from site 0 to site 1 as a share of one link's rate (4 links:
// 400 in all), their sum, and over all paths the links' tail drops and
// the paths' timeouts, losses and delay cuts in the interval.
func (s wanSim) logConnSeries(t *testing.T, eps []*Endpoint, net *SimNet, wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	const every = 5 * time.Millisecond
	sample := func() ([]int64, [4]int64) {
		arrived := make([]int64, s.pairs)
		var ev [4]int64
		for _, l := range net.Stats().Links {
			ev[0] += l.DroppedQueueFull.Packets
		}
		for r, ep := range eps {
			for _, ps := range ep.Stats().Peers {
				if r >= s.pairs && ps.Rank == r-s.pairs {
					arrived[ps.Rank] = ps.Conn.BytesArrived
				}
				for _, p := range ps.Paths {
					ev[1] += p.Timeouts
					ev[2] += p.PacketsLost
					ev[3] += p.CutsDelay
				}
			}
		}
		return arrived, ev
	}
	prev, pev := sample()
	for at := every; ; at += every {
		select {
		case <-done:
			return
		case <-time.After(every):
		}
		now, ev := sample()
		var b strings.Builder
		fmt.Fprintf(&b, "%4d ms, connections, %% of a link's rate:", at/time.Millisecond)
		var sum float64
		for r := range now {
			v := 100 * float64(now[r]-prev[r]) / (float64(s.link.Rate) * every.Seconds())
			sum += v
			fmt.Fprintf(&b, " %4.0f", v)
		}
		fmt.Fprintf(&b, " | sum %4.0f | drops %d timeouts %d lost %d delay cuts %d", sum, ev[0]-pev[0], ev[1]-pev[1], ev[2]-pev[2], ev[3]-pev[3])
		prev, pev = now, ev
		t.Log(b.String())
	}
}

// TestSimECMPBypass: with SimECMP.Bypass, the ACKs of a one-way transfer
// (datagrams far below 600 bytes) take no ECMP link back; so with
// SimECMP.Priority at the endpoints' Config.ControlDSCP (marked control
// datagrams are served first); they do without either, with control
// marking off, or with Priority at another class.
func TestSimECMPBypass(t *testing.T) {
	for _, tt := range []struct {
		bypass   int
		priority uint8
		dscp     int // Config.ControlDSCP
		back     bool
	}{
		{0, 0, 0, true},
		{600, 0, 0, false},
		{0, DefaultControlDSCP, 0, false},
		{0, 46, 46, false},
		{0, DefaultControlDSCP, -1, true},
		{0, 46, 0, true},
	} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ecmp := &SimECMP{Links: 2, Link: wanSimLink, Seed: 3, Bypass: tt.bypass, Priority: tt.priority}
			cfg := Config{Paths: 2, ListenAddr: netip.MustParseAddrPort("10.0.0.1:0"), MaxDatagram: 8972, ControlDSCP: tt.dscp}
			cfg.Core.IDSeed = 5
			eps, net, err := NewSimWorld(ctx, 2, cfg, SimConfig{ECMP: ecmp})
			if err != nil {
				t.Fatal(err)
			}
			defer net.Close()
			r := eps[1].Recv(0, benchTag(17, 0), make([]byte, 1<<20))
			s := eps[0].Send(1, benchTag(17, 0), make([]byte, 1<<20))
			for _, q := range []transport.Request{r, s} {
				if _, err := q.Wait(ctx); err != nil {
					t.Fatal(err)
				}
			}
			var back int64
			for _, b := range net.ECMPLinkBytes(1, 0) {
				back += b
			}
			for _, ep := range eps {
				_ = ep.Close()
			}
			if (back > 0) != tt.back {
				t.Errorf("%+v: %d bytes went back over the links", tt, back)
			}
		})
	}
}

// A ControlDSCP above 63 is refused, naming the field.
func TestControlDSCPRange(t *testing.T) {
	for _, v := range []int{64, 255} {
		_, err := Config{Size: 1, ControlDSCP: v}.withDefaults()
		require.ErrorContains(t, err, "ControlDSCP")
	}
	for v, want := range map[int]int{0: DefaultControlDSCP, -1: 0, 1: 1, 63: 63} {
		c, err := Config{Size: 1, ControlDSCP: v}.withDefaults()
		require.NoError(t, err)
		require.Equal(t, want, c.ControlDSCP)
	}
}

// TestSimECMPBalanced: with SimECMP.Balanced, a connection of 4 paths over
// 4 links puts one path on each (every link carries some of a 1 MiB
// message); with the hash and this seed, two paths share a link and one
// link carries nothing, as ECMP may do; with SimECMP.Place putting every
// path on link 2, only link 2 carries it.
func TestSimECMPBalanced(t *testing.T) {
	for _, mode := range []string{"hash", "balanced", "place"} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ecmp := &SimECMP{Links: 4, Link: wanSimLink, Seed: 1, Balanced: mode == "balanced"}
			if mode == "place" {
				ecmp.Place = func(rank, path int) int { return 6 } // mod 4
			}
			cfg := Config{Paths: 4, ListenAddr: netip.MustParseAddrPort("10.0.0.1:0"), MaxDatagram: 8972}
			cfg.Core.IDSeed = 5
			cfg.Repick.Off = true
			eps, net, err := NewSimWorld(ctx, 2, cfg, SimConfig{ECMP: ecmp})
			if err != nil {
				t.Fatal(err)
			}
			defer net.Close()
			const size = 1 << 20
			r := eps[1].Recv(0, benchTag(16, 0), make([]byte, size))
			s := eps[0].Send(1, benchTag(16, 0), make([]byte, size))
			for _, q := range []transport.Request{r, s} {
				if _, err := q.Wait(ctx); err != nil {
					t.Fatal(err)
				}
			}
			links := net.ECMPLinkBytes(0, 1)
			for _, ep := range eps {
				_ = ep.Close()
			}
			unused := 0
			for _, b := range links {
				if b == 0 {
					unused++
				}
			}
			switch {
			case mode == "balanced" && unused != 0:
				t.Errorf("balanced: bytes per link %v, want every link used", links)
			case mode == "hash" && unused == 0:
				t.Errorf("hashed (seed 1): bytes per link %v, want one link unused (the case Balanced is for)", links)
			case mode == "place" && (unused != 3 || links[2] < size):
				t.Errorf("placed on link 2: bytes per link %v, want all %d on link 2", links, size)
			}
		})
	}
}
