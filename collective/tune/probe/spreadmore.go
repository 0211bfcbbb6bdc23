package probe

import (
	"context"
	"fmt"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/topology"
)

// The second look. On a multipath level the lone pairs (the measuring
// pair and spreadPairsMultipath-1 spread pairs) each read one
// connection's luck, and the contended round, which sees every link, is
// meant to lift the level to the links' total where both missed some.
// But the round moves bytes on every pair at once, and on the lab's 2
// cores under its 8 ranks it often reads below the links (in session
// 26's quiet sweep 77.7-97.1 MB/s of the WAN's ~97, median 92.2), so
// where both lone pairs sat on 3 of the 4 links it lifted them only part
// of the way: hierarchical 4 MiB, round 1, lone 71.9, spread 70.2, round
// 82.8, and the model priced the WAN 15 % low (mean/predicted 0.84;
// round 2, whose lone pair read 97.2, 0.91). A lone transfer that
// reaches every link reads it (96-98 MB/s in that sweep: two ranks busy,
// not eight), and one connection's 8 ports miss one of 4 links about 4
// times in 10. So where the round read more than retryAbove times the
// lone pairs' best (the evidence that they missed links: a round can only
// read more than a lone transfer where it reaches links the lone one did
// not), up to spreadMore more spread pairs of the level take a turn
// alone, each a connection of its own; the level's lone figure is the
// best of all. All lone pairs then missing a link is about 1 probe in 50
// of those (0.38^4). The choice is a function of the shared figures, the
// same on every rank. Cost: nothing where the round read no more than
// that; else an AllReduce of 3 values and spreadMore turns (in the lab
// ~0.1 s each: 2 round trips, 2 bulk transfers of 4 MiB).
const (
	spreadMore = 2
	retryAbove = 1.1
)

// lookAgain runs the second look's turns (see spreadMore) on every rank
// of c, after Measure shared the figures: per level, lone and spread are
// the measuring pair's and the spread pairs' best bandwidth, round the
// contended round's aggregate (0: none), multipath whether the level
// counted as multipath, ran the spread pairs that ran. It returns per
// level the best bandwidth of the turns it ran (0: none) and how many
// ran, the same on every rank.
func lookAgain(ctx context.Context, c *collective.Comm, topo topology.Topology, opts Options, lone, spread, round [3]float64, multipath [3]bool, ran [3]int) ([3]float64, [3]int, error) {
	var more [3]int
	var items []spreadItem
	for l := range 3 {
		if opts.Skip[l] || !multipath[l] || !(round[l] > retryAbove*max(lone[l], spread[l])) {
			continue
		}
		pairs := spreadCandidates(topo, l, ran[l]+spreadMore)
		for _, p := range pairs[min(ran[l], len(pairs)):] {
			items = append(items, spreadItem{l, p})
			more[l]++
		}
	}
	if len(items) == 0 {
		return [3]float64{}, more, nil
	}
	bw, err := runTurns(ctx, c, items, opts)
	if err != nil {
		return bw, more, err
	}
	shared := bw[:]
	if err := collective.AllReduce(ctx, c, shared, shared, collective.Max); err != nil {
		return bw, more, fmt.Errorf("probe: sharing the second look's figures: %w", err)
	}
	return [3]float64(shared), more, nil
}
