// Package probe measures the link figures the cost model (collective/tune)
// takes, for a communicator whose topology gives none: per level of the
// topology (ranks of a host, hosts of a site, sites), one pair of ranks
// runs a few ping-pongs (the latency) and a few bulk transfers (the
// bandwidth), and an AllReduce (max) gives every rank the same figures, so
// that every rank makes the same choice from them. Both ranks of a pair
// also read their process's CPU time around the ping-pongs, a few bursts
// of small messages and the bulk transfers: the level's CPU per message
// (a burst's CPU beyond a ping-pong's, both ends, over the burst's extra
// messages: a round trip's waiting, which the transport's timers and
// spins fill with CPU over a long link, cancels out; where the bursts are
// no faster a message, ping-pongs answered a round trip late give the
// waiting's rate instead) and per byte (the
// bulk transfers', less a round trip's each, over their bytes), which the
// cost model charges to the cores of the ranks' machines
// (topology.Link's CPUPerByte and CPUPerMessage).
//
// The pairs are the first two ranks of the first host that has two, the
// first ranks of the first two hosts of the first site that has two, and
// the first ranks of the first two sites. A level without such a pair
// (one host, one site) gets no figures. Then up to two more pairs of the
// WAN level (one where it is multipath, Options.Multipath) move bulk
// transfers alone, one pair after another (spread.go:
// one connection's ports may hash onto only some of the WAN's links), and
// the level's bandwidth is the fastest pair's (and where the contended
// round below reads well above them, up to spreadMore more: spreadmore.go).
// Then every level runs a
// contended round (contend.go): all its pairs (LevelPairs) make a few
// small round trips and then move a bulk transfer at once, as a
// collective's phase does; half the pairs' lower median round trip is
// the level's busy latency (topology.Link's LatencyBusy), its CPU a byte
// (every paired rank's CPU) the level's busy one (CPUPerByteBusy), and
// on a level whose connections are multipath (Options.Multipath) its
// aggregate the level's bandwidth where it beats the lone transfers'
// (a connection there reaches every link once re-picked). Last, where the process's CPU time can be read, every rank
// times the reduction kernel (reduce.go): the lower median of the ranks'
// CPU a byte reduced is the job's topology.Links.ReducePerByte.
package probe

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/topology"
)

// Options set what a probe sends. The zero value gives the defaults.
type Options struct {
	// PingPongs is the least number of round trips of 8 bytes per level;
	// the median counts (the typical trip, with the waits for a core that
	// the operations' steps meet too, which the fastest trip misses).
	// Default 5; range [1, 1000].
	PingPongs int
	// PingBudget: past PingPongs, the round trips go on until they have
	// taken this long (at most maxPings of them), so that on a busy
	// machine one of them likely ran with both ranks on a core. Default
	// 10ms; range [0, 1s]; a negative value means 0.
	PingBudget time.Duration
	// BulkBytes is each of the bulk transfers (bulkRuns) per level.
	// Default 4 MiB; range [4 KiB, 1 GiB].
	BulkBytes int
	// Skip, per level (host, site, WAN, Pairs' order), leaves it
	// unmeasured (its figures are known): every rank must give the same.
	Skip [3]bool
	// Now is the clock; default the monotonic time since the probe began.
	// transport/simnet's World.Now makes a probe measure virtual time.
	Now func() time.Duration
	// CPUTime is the CPU time the rank's process has used so far. Default:
	// the process's (getrusage) where Now is not given; none where it is
	// (a probe in virtual time, its ranks in one process), and then the
	// figures carry no CPU costs. A rank whose CPU time cannot be read
	// measures none either.
	CPUTime func() time.Duration
	// Sleep waits d or until ctx ends. Default: a timer where Now is not
	// given; none where it is, and then a level whose bursts cannot tell a
	// message's CPU from the waiting's has no delayed ping-pongs to.
	Sleep func(ctx context.Context, d time.Duration) error
	// Multipath, per level, says whether this rank's connections to its
	// peers of that level each spread their bytes over every path between
	// the hosts (MetaRoCE: a connection's ports re-picked onto every ECMP
	// link), not one (TCP, shared memory). A level counts as multipath
	// only where every rank says so (shared in its contended round's
	// barrier); there the round's aggregate, every link busy, may raise
	// the level's bandwidth above its lone transfers' (contendedFigures),
	// which assumes a connection has at least as many paths as the level
	// has links (MetaRoCE's default 8 against the lab's 4): one of P paths
	// reaches P links at most, however it re-picks.
	Multipath [3]bool
	// Observe, where not nil, is given each measured level's bandwidth
	// figures before Measure returns (the same on every rank): the
	// evidence behind the level's Bandwidth, for a log.
	Observe func(Detail)
}

// Detail is how a level's bandwidth came about (Options.Observe): the
// measuring pair's lone transfers (Lone), the best of the spread pairs'
// (Spread, 0: none ran), the best of the second look's (Again, 0: none
// ran; spreadmore.go), SpreadPairs of them in all, the contended round's aggregate (Contended: K
// pairs' Bytes each through one link over the slowest pair's time, less
// a round trip; 0: no round), whether the level counted as multipath,
// and the Bandwidth the level got from them.
type Detail struct {
	Level                   int // Pairs' order: 0 host, 1 site, 2 WAN
	Lone, Spread, Contended float64
	Again                   float64
	SpreadPairs             int
	Pairs, K, Bytes         int
	Multipath               bool
	Bandwidth               float64
}

func (o Options) withDefaults() (Options, error) {
	if o.PingPongs == 0 {
		o.PingPongs = 5
	}
	if o.PingBudget == 0 {
		o.PingBudget = 10 * time.Millisecond
	}
	o.PingBudget = max(o.PingBudget, 0)
	if o.BulkBytes == 0 {
		o.BulkBytes = 4 << 20
	}
	if o.Now == nil {
		start := time.Now()
		o.Now = func() time.Duration { return time.Since(start) }
		if _, ok := processCPU(); ok && o.CPUTime == nil {
			o.CPUTime = func() time.Duration { t, _ := processCPU(); return t }
		}
		if o.Sleep == nil {
			o.Sleep = sleep
		}
	}
	switch {
	case o.PingPongs < 1 || o.PingPongs > 1000:
		return o, fmt.Errorf("probe: PingPongs %d out of range [1, 1000]", o.PingPongs)
	case o.PingBudget > time.Second:
		return o, fmt.Errorf("probe: PingBudget %v above 1s", o.PingBudget)
	case o.BulkBytes < 4<<10 || o.BulkBytes > 1<<30:
		return o, fmt.Errorf("probe: BulkBytes %d out of range [4096, %d]", o.BulkBytes, 1<<30)
	}
	return o, nil
}

// Pairs returns the measuring pair of each level (host, site, WAN) of
// topo, by communicator rank, or {-1, -1} where the level has none.
func Pairs(topo topology.Topology) [3][2]int {
	pairs := [3][2]int{{-1, -1}, {-1, -1}, {-1, -1}}
	for _, h := range topo.Hosts() {
		if r := topo.RanksOnHost(h); len(r) >= 2 {
			pairs[0] = [2]int{r[0], r[1]}
			break
		}
	}
	for _, s := range topo.Sites() {
		if hs := topo.HostsOnSite(s); len(hs) >= 2 {
			pairs[1] = [2]int{topo.RanksOnHost(hs[0])[0], topo.RanksOnHost(hs[1])[0]}
			break
		}
	}
	if leaders := topo.SiteLeaders(); len(leaders) >= 2 {
		pairs[2] = [2]int{leaders[0], leaders[1]}
	}
	return pairs
}

// Measure runs the probe on every rank of c, whose ranks run where topo
// says, and returns the figures of each level it could measure (the same
// on every rank). Every rank of c must call it at once, with the same
// topo and opts.
func Measure(ctx context.Context, c *collective.Comm, topo topology.Topology, opts Options) (topology.Links, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return topology.Links{}, err
	}
	if topo.Size() != c.Size() {
		return topology.Links{}, fmt.Errorf("probe: topology of %d ranks for a communicator of %d", topo.Size(), c.Size())
	}
	// figures[slots*l:] is level l's: its latency in seconds, its
	// bandwidth, the round trips and the seconds the ping-pongs and the
	// bursts took, filled in by the pair's first rank, and each end's CPU
	// seconds (+1, so that 0 says "not measured") over the ping-pongs,
	// the bulk transfers and the bursts, by that end; then the delayed
	// ping-pongs' seconds (p[0]) and each end's CPU seconds (+1) over them,
	// and their cold latency (p[0]; 0: not run).
	const slots = 15
	figures := make([]float64, 3*slots)
	for l, p := range Pairs(topo) {
		if p[0] < 0 || opts.Skip[l] || (c.Rank() != p[0] && c.Rank() != p[1]) {
			continue
		}
		m, err := measurePair(ctx, c, p, opts)
		if err != nil {
			return topology.Links{}, fmt.Errorf("probe: level %d, ranks %d and %d: %w", l, p[0], p[1], err)
		}
		f, end := figures[slots*l:], 0
		if c.Rank() == p[0] {
			f[0], f[1], f[6], f[9], f[10], f[11], f[14] = m.latency, m.bandwidth, float64(m.pings), m.pingTook, m.burstTook, m.delayedTook, m.coldLatency
		} else {
			end = 1
		}
		if m.cpu {
			f[2+end], f[4+end], f[7+end] = 1+m.pingCPU, 1+m.bulkCPU, 1+m.burstCPU
			if m.delayedTook >= 0 {
				f[12+end] = 1 + m.delayedCPU
			}
		}
	}
	// Then the spread pairs' lone transfers (spread.go), and each level's
	// contended round (contend.go), their figures after the pairs': the
	// spread pairs' best bandwidth per level last.
	spread, spreadRan, err := runSpread(ctx, c, topo, opts)
	if err != nil {
		return topology.Links{}, err
	}
	rounds, err := runRounds(ctx, c, topo, opts)
	if err != nil {
		return topology.Links{}, err
	}
	mine, err := runReduce(ctx, c, opts.CPUTime)
	if err != nil {
		return topology.Links{}, err
	}
	reduced := make([]float64, c.Size()) // each rank's reduceCPU, at its rank
	reduced[c.Rank()] = mine
	figures = append(figures, rounds.figures...)
	figures = append(figures, reduced...)
	figures = append(figures, spread[:]...)
	if err := collective.AllReduce(ctx, c, figures, figures, collective.Max); err != nil {
		return topology.Links{}, fmt.Errorf("probe: sharing the figures: %w", err)
	}
	again, err := secondLook(ctx, c, topo, opts, figures, slots, rounds, &spreadRan)
	if err != nil {
		return topology.Links{}, err
	}
	var ls topology.Links
	for l, dst := range []**topology.Link{&ls.Host, &ls.Site, &ls.WAN} {
		f := figures[slots*l:]
		if f[1] > 0 {
			spreadBW := figures[len(figures)-3+l]
			link := topology.Link{Latency: time.Duration(math.Round(f[0] * 1e9)), Bandwidth: max(f[1], spreadBW, again[l])}
			if !slices.Contains([]float64{f[2], f[3], f[4], f[5], f[7], f[8]}, 0) {
				r := cpuRuns{
					ping: f[2] + f[3] - 2, burst: f[7] + f[8] - 2, bulk: f[4] + f[5] - 2,
					pingTook: f[9], burstTook: f[10], pings: int(f[6]), bulkBytes: opts.BulkBytes}
				if f[12] > 0 && f[13] > 0 {
					r.ping0, r.delayed, r.delayedTook = f[2]-1, f[12]-1, f[11]
				}
				link.CPUPerMessage, link.CPUPerByte = cpuCosts(r)
			}
			link.LatencyCold = time.Duration(math.Round(min(f[14], topology.MaxLatency.Seconds()) * 1e9))
			trip := -1.0 // a ping-pong's CPU, both ends; unknown without the pair's CPU figures
			if link.CPUPerByte != 0 || link.CPUPerMessage != 0 {
				trip = (f[2] + f[3] - 2) / max(1, f[6])
			}
			d := rounds.apply(figures[3*slots:], l, &link, 2*f[0], trip)
			if opts.Observe != nil {
				d.Level, d.Lone, d.Spread, d.Again, d.SpreadPairs, d.Bandwidth = l, f[1], spreadBW, again[l], spreadRan[l], link.Bandwidth
				opts.Observe(d)
			}
			*dst = &link
		}
	}
	at := 3*slots + len(rounds.figures)
	ls.ReducePerByte = reducePerByte(figures[at : at+c.Size()])
	return ls, nil
}

// secondLook runs lookAgain over Measure's shared figures (each level's
// slots figures first, then rs's, the spread pairs' best per level last),
// adds the pairs it ran to *ran and returns per level their best
// bandwidth (0: none ran), the same on every rank.
func secondLook(ctx context.Context, c *collective.Comm, topo topology.Topology, opts Options, figures []float64, slots int, rs rounds, ran *[3]int) ([3]float64, error) {
	var lone, spread, round [3]float64
	at := len(figures) - 3
	for l := range 3 {
		f := figures[slots*l:]
		lone[l], spread[l] = f[1], figures[at+l]
		round[l] = aggregate(rs.k[l], rs.bytes[l], figures[3*slots+l], 2*f[0])
	}
	again, more, err := lookAgain(ctx, c, topo, opts, lone, spread, round, rs.multipath, *ran)
	for l := range 3 {
		ran[l] += more[l]
	}
	return again, err
}
