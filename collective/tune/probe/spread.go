package probe

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
)

// The spread pairs. Between sites, one connection's bulk transfers show
// that connection's luck, not the level's: a MetaRoCE connection's 8
// paths (8 UDP source ports) hashed by ECMP onto the lab's 4 WAN links of
// 25 MB/s leave a link unused in about 4 connections in 10, and the
// transport's re-pick finds it only after the probe is done (about 1 s).
// In the quiet sweep of 2026-12-05 (37 runs, bench/results/
// quiet-20261205-2300/model_sweep) the one measuring pair put the WAN at
// 96-100 MB/s in 25 runs, 73 in 9 and 49.5 in 2 (3, then 2, of the 4
// links), while the job's connections, re-picked, ran at the full
// uplink; every miss of the model's 15 % band at 16 MiB and above was
// such a run. So the WAN level's bandwidth is also measured alone on up
// to spreadPairs-1 more pairs of the level (SpreadPairs), each a
// connection of its own with ports of its own, one pair after another:
// a few ping-pongs (the first opens the connection; the fastest is the
// round trip taken off) and spreadBulks bulk transfers of BulkBytes each;
// the level's bandwidth is the fastest of every pair's (the link's rate
// for one transfer: a transfer is only ever slowed below it). With 8
// ports in 4 links, all 3 pairs missing a link is about 1 run in 20
// rather than 4 in 10 (where every rank says the level is multipath, one
// more pair, the contended round taking the third's place: runSpread).
// The latency and the CPU figures stay the first pair's. Cost: a barrier
// (an AllReduce of one value) and per extra pair spreadPings round trips
// and spreadBulks bulk transfers, one pair at a time: in the lab about
// 2 x 4.2 ms + 2 x 47 ms, 0.1 s a pair (the probe as a whole took 0.4-0.5
// s when this was written, 0.7-0.8 s with session 25's larger contended
// round).
const (
	spreadPairs          = 3
	spreadPairsMultipath = 2 // on a multipath level (runSpread)
	spreadPings          = 2
	spreadBulks          = 2
)

// spreadLevel is the level whose bandwidth the spread pairs measure (the
// WAN's: the one the lab shows hashing onto several links; the host's
// shared memory has no paths, and the lab's site LAN one).
const spreadLevel = 2

// SpreadPairs returns the pairs of level l of topo besides its measuring
// pair (Pairs) whose lone bulk transfers also count toward the level's
// bandwidth, by communicator rank: the first of LevelPairs(topo, l) other
// than the measuring pair, at most spreadPairs-1 of them; none for levels
// other than the WAN's or where the level has no measuring pair. A pure
// function of topo, the same on every rank.
func SpreadPairs(topo topology.Topology, l int) [][2]int {
	return spreadCandidates(topo, l, spreadPairs-1)
}

// spreadCandidates returns the first n pairs of LevelPairs(topo, l) other
// than the level's measuring pair (Pairs), by communicator rank; none for
// levels other than spreadLevel or where the level has no measuring pair.
func spreadCandidates(topo topology.Topology, l, n int) [][2]int {
	if l != spreadLevel {
		return nil
	}
	first := Pairs(topo)[l]
	if first[0] < 0 {
		return nil
	}
	pairs, _ := LevelPairs(topo, l)
	var out [][2]int
	for _, p := range pairs {
		if len(out) == n {
			break
		}
		if p != first && p != [2]int{first[1], first[0]} {
			out = append(out, p)
		}
	}
	return out
}

// spreadItem is one spread pair's turn: its level and its ranks.
type spreadItem struct {
	level int
	pair  [2]int
}

// runSpread runs this rank's part of every spread pair's turn (SpreadPairs,
// the levels opts.Skip leaves), every rank of c together, after every
// measuring pair's (a barrier first, so that no turn overlaps a measuring
// pair's transfers), one turn after another: a turn's first rank starts
// once the previous turn's first rank, done, sends it a token. On a level
// that every rank says is multipath (the barrier's value: Options.
// Multipath) only the first spreadPairsMultipath-1 of its spread pairs
// run: its contended round, all of its pairs at once and contendSpread
// times the bytes there (contendBytes), shows the links' total, which
// such a connection reaches once re-picked, and the turn left out (in
// the lab ~0.1 s: 2 round trips, 2 bulk transfers of 4 MiB) pays for
// most of that round's extra ~0.13 s. It returns per level the bandwidth
// this rank measured as a turn's first rank (0 where it measured none)
// and the spread pairs that ran (the same on every rank).
func runSpread(ctx context.Context, c *collective.Comm, topo topology.Topology, opts Options) ([3]float64, [3]int, error) {
	var bw [3]float64
	var ran [3]int
	var items []spreadItem
	for l := range 3 {
		if opts.Skip[l] {
			continue
		}
		for _, p := range SpreadPairs(topo, l) {
			items = append(items, spreadItem{l, p})
		}
	}
	if len(items) == 0 {
		return bw, ran, nil
	}
	not := make([]float64, 3) // per level, whether some rank says it is not multipath
	for l := range not {
		if !opts.Multipath[l] {
			not[l] = 1
		}
	}
	if err := collective.AllReduce(ctx, c, not, not, collective.Max); err != nil {
		return bw, ran, fmt.Errorf("probe: the barrier before the spread pairs: %w", err)
	}
	kept := items[:0]
	for _, it := range items {
		if not[it.level] == 0 && ran[it.level] == spreadPairsMultipath-1 {
			continue
		}
		ran[it.level]++
		kept = append(kept, it)
	}
	b, err := runTurns(ctx, c, kept, opts)
	return b, ran, err
}

// runTurns runs this rank's part of the spread pairs' turns items, every
// rank of c together, one turn after another (a turn's first rank starts
// once the previous turn's first rank, done, sends it a token), and
// returns per level the bandwidth this rank measured as a turn's first
// rank (0 where it measured none).
func runTurns(ctx context.Context, c *collective.Comm, items []spreadItem, opts Options) ([3]float64, error) {
	var bw [3]float64
	me, token := c.Rank(), make([]byte, 1)
	for i, it := range items {
		if me != it.pair[0] && me != it.pair[1] {
			continue
		}
		first := me == it.pair[0]
		if first && i > 0 && items[i-1].pair[0] != me {
			if err := collective.Recv(ctx, c, token, items[i-1].pair[0]); err != nil {
				return bw, tokenWaitErr(ctx, items[i-1], it, err)
			}
		}
		b, err := spreadPair(ctx, c, it.pair, opts)
		if err != nil {
			return bw, fmt.Errorf("probe: level %d, spread pair %v: %w", it.level, it.pair, err)
		}
		if first {
			bw[it.level] = max(bw[it.level], b)
			if i+1 < len(items) && items[i+1].pair[0] != me {
				if err := collective.Send(ctx, c, token, items[i+1].pair[0]); err != nil {
					next := items[i+1]
					return bw, fmt.Errorf("probe: level %d, spread pair %v passing the token to rank %d, the first of spread pair %v: %w", next.level, it.pair, next.pair[0], next.pair, err)
				}
			}
		}
	}
	return bw, nil
}

// tokenWaitErr is the error of turn it's first rank whose wait for the
// token from prev's first rank failed with err: it names that rank and the
// turn it ends. Unless the wait ended with ctx (this rank's own deadline,
// which says nothing of the rank's health) or this rank closed c, the
// rank failed or its link did (a receive involves no other rank): then it
// is a *transport.PeerError naming it, by c's rank.
func tokenWaitErr(ctx context.Context, prev, it spreadItem, err error) error {
	err = fmt.Errorf("probe: level %d, spread pair %v waiting for the token from rank %d, the first of spread pair %v: %w", it.level, it.pair, prev.pair[0], prev.pair, err)
	if ctx.Err() != nil || errors.Is(err, collective.ErrClosed) {
		return err
	}
	return &transport.PeerError{Rank: prev.pair[0], Err: err}
}

// spreadPair runs pair p's turn on both of its ranks (spreadPings round
// trips of 8 bytes, then spreadBulks bulk transfers of opts.BulkBytes,
// each acknowledged) and returns, on p[0], the bandwidth: BulkBytes over
// the fastest transfer less the fastest round trip (as measurePair's).
func spreadPair(ctx context.Context, c *collective.Comm, p [2]int, opts Options) (float64, error) {
	first := c.Rank() == p[0]
	swap := pairSwap(ctx, c, p, first)
	small := make([]byte, 8)
	rtts := make([]float64, 0, spreadPings)
	for range spreadPings {
		start := opts.Now()
		if err := swap(small, small); err != nil {
			return 0, err
		}
		rtts = append(rtts, (opts.Now() - start).Seconds())
	}
	bulk := make([]byte, opts.BulkBytes)
	tooks := make([]float64, 0, spreadBulks)
	for range spreadBulks {
		start := opts.Now()
		if err := swap(bulk, small); err != nil {
			return 0, err
		}
		tooks = append(tooks, (opts.Now() - start).Seconds())
	}
	if !first {
		return 0, nil
	}
	return bulkBandwidth(opts.BulkBytes, slices.Min(tooks), slices.Min(rtts)), nil
}

// bulkBandwidth is bytes over took, the fastest bulk transfer's seconds,
// less rtt, the fastest round trip (the bulk's latency and its
// acknowledgement's), where took is more than twice rtt.
func bulkBandwidth(bytes int, took, rtt float64) float64 {
	if took > 2*rtt {
		took -= rtt
	}
	return float64(bytes) / took
}

// pairSwap returns pair p's exchange on this rank (first: p[0]): it sends
// out then receives in on p[0]; p[1] receives out's bytes, then sends
// in's.
func pairSwap(ctx context.Context, c *collective.Comm, p [2]int, first bool) func(out, in []byte) error {
	peer := p[1]
	if !first {
		peer = p[0]
	}
	return func(out, in []byte) error {
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
}
