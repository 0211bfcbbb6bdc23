// Package probe measures the link figures the cost model (collective/tune)
// takes, for a communicator whose topology gives none: per level of the
// topology (ranks of a host, hosts of a site, sites), one pair of ranks
// runs a few ping-pongs (the latency) and one bulk transfer (the
// bandwidth), and an AllReduce (max) gives every rank the same figures, so
// that every rank makes the same choice from them.
//
// The pairs are the first two ranks of the first host that has two, the
// first ranks of the first two hosts of the first site that has two, and
// the first ranks of the first two sites. A level without such a pair
// (one host, one site) gets no figures. The other ranks only join the
// AllReduce.
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
	// figures[2l] is level l's latency in seconds, [2l+1] its bandwidth;
	// only the pair's first rank fills them in.
	figures := make([]float64, 6)
	for l, p := range Pairs(topo) {
		if p[0] < 0 || opts.Skip[l] || (c.Rank() != p[0] && c.Rank() != p[1]) {
			continue
		}
		lat, bw, err := measurePair(ctx, c, p, opts)
		if err != nil {
			return topology.Links{}, fmt.Errorf("probe: level %d, ranks %d and %d: %w", l, p[0], p[1], err)
		}
		if c.Rank() == p[0] {
			figures[2*l], figures[2*l+1] = lat, bw
		}
	}
	if err := collective.AllReduce(ctx, c, figures, figures, collective.Max); err != nil {
		return topology.Links{}, fmt.Errorf("probe: sharing the figures: %w", err)
	}
	var ls topology.Links
	for l, dst := range []**topology.Link{&ls.Host, &ls.Site, &ls.WAN} {
		if figures[2*l+1] > 0 {
			*dst = &topology.Link{Latency: time.Duration(math.Round(figures[2*l] * 1e9)), Bandwidth: figures[2*l+1]}
		}
	}
	return ls, nil
}

// maxPings bounds the round trips of one level past PingPongs.
const maxPings = 200

// measurePair runs the ping-pongs and the bulk transfer between p[0] and
// p[1] on both, and returns on p[0] the one-way latency (half the median
// round trip) and the bandwidth (the bulk's bytes over the median time of
// bulkRuns transfers, less a round trip, the acknowledgement's included). The median, not the
// fastest: in the two-site lab, loaded, an operation's WAN steps took
// 0.2-0.5 ms more than the fastest ping-pong's latency each
// (bench/results/model_lab), as a typical trip does.
func measurePair(ctx context.Context, c *collective.Comm, p [2]int, opts Options) (float64, float64, error) {
	first := c.Rank() == p[0]
	peer := p[1]
	if !first {
		peer = p[0]
	}
	// swap sends out then receives in on p[0]; p[1] receives out's bytes,
	// then sends in's.
	swap := func(out, in []byte) error {
		if !first {
			if err := collective.Recv(ctx, c, out, peer); err != nil {
				return err
			}
			return collective.Send(ctx, c, in, peer)
		}
		if err := collective.Send(ctx, c, out, peer); err != nil {
			return err
		}
		return collective.Recv(ctx, c, in, peer)
	}
	// small[0] = 1 marks the last round trip: p[0] decides, p[1] sees it
	// in the ping it echoes.
	small := make([]byte, 8)
	rtts := make([]float64, 0, max(opts.PingPongs, maxPings))
	begin := opts.Now()
	for n := 1; ; n++ {
		if first {
			small[0] = 0
			if n >= max(opts.PingPongs, maxPings) || n >= opts.PingPongs && opts.Now()-begin >= opts.PingBudget {
				small[0] = 1
			}
		}
		start := opts.Now()
		if err := swap(small, small); err != nil {
			return 0, 0, err
		}
		rtts = append(rtts, (opts.Now() - start).Seconds())
		if small[0] == 1 {
			break
		}
	}
	slices.Sort(rtts)
	rtt := rtts[len(rtts)/2]
	bulk := make([]byte, opts.BulkBytes)
	var tooks [bulkRuns]float64
	for i := range tooks {
		start := opts.Now()
		if err := swap(bulk, small); err != nil {
			return 0, 0, err
		}
		tooks[i] = (opts.Now() - start).Seconds()
	}
	slices.Sort(tooks[:])
	took := tooks[bulkRuns/2]
	if took > 2*rtt {
		took -= rtt // the bulk's latency and the acknowledgement's
	}
	return rtt / 2, float64(opts.BulkBytes) / took, nil
}

// bulkRuns is how many bulk transfers a level's bandwidth takes the
// median of: in the loaded lab, one 4 MiB transfer gave predictions of
// the same 4 MiB AllReduce 2-6x apart from run to run.
const bulkRuns = 3
