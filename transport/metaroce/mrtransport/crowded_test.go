package mrtransport

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport/metaroce"
)

// crowdedWindows models one connection's paths on links shared per path
// with other connections: link l carries total[l] paths in all, so a path
// on it sends at rate/total[l] bytes per sample, each sample within ±20 %
// at random (seeded), with 2 ms of queue. sent[i] is path i's link for
// its sending; recv[i], if not nil, its link for the other direction
// (packets of 9000 bytes received), whose links carry recvTotal[l] paths.
func crowdedWindows(seed uint64, rate float64, sent []int, total []int, recv []int, recvTotal []int, n int) [][]pathSample {
	rng := rand.New(rand.NewPCG(seed, 7))
	noisy := func(r float64) float64 { return r * (0.8 + 0.4*rng.Float64()) }
	w := make([][]pathSample, len(sent))
	cum := make([]pathSample, len(sent))
	for range n {
		for i := range sent {
			cum[i].BytesAcked += int64(noisy(rate / float64(total[sent[i]])))
			if recv != nil {
				cum[i].Recv += int64(noisy(rate/float64(recvTotal[recv[i]])) / 9000)
			}
			cum[i].Queue = 2 * time.Millisecond
			w[i] = append(w[i], cum[i])
		}
	}
	return w
}

// The 32 paths of 4 connections lie 12, 8, 6, 6 on 4 links: a connection
// with paths on every link names one of the paths on the first (each of
// those runs at half the rate of one on the emptiest links); with 8 per
// link, or all on one link, it names none.
func TestPickCrowdedNamesTheMostCrowdedLink(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	const rate = 2.5e6 // bytes per sample: 25 MB/s links sampled every 100 ms
	mine := []int{0, 0, 0, 1, 1, 2, 2, 3}
	for _, c := range []struct {
		name  string
		total []int
		paths []int
		want  []int // nil: none
	}{
		{"totals 12 8 6 6", []int{12, 8, 6, 6}, mine, []int{0, 1, 2}},
		{"totals 6 6 12 8", []int{6, 6, 12, 8}, mine, []int{5, 6}},
		{"totals 8 8 8 8", []int{8, 8, 8, 8}, mine, nil},
		{"one bottleneck", []int{8}, []int{0, 0, 0, 0, 0, 0, 0, 0}, nil},
	} {
		for seed := range uint64(50) {
			t.Run(fmt.Sprintf("%s/seed=%d", c.name, seed), func(t *testing.T) {
				got, score, ok := pickCrowded(crowdedWindows(seed, rate, c.paths, c.total, nil, nil, p.CrowdedWindow), p)
				if c.want == nil {
					require.False(t, ok, "named path %d (score %.2f)", got, score)
					return
				}
				require.True(t, ok, "named none")
				require.Contains(t, c.want, got)
				require.Less(t, score, 1.0)
			})
		}
	}
}

// A path whose link is crowded only in the other direction (what the
// connection receives on it) is named: a port names a path both ways.
func TestPickCrowdedScoresBothWays(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	sent := []int{0, 1, 2, 3, 0, 1, 2, 3}
	for seed := range uint64(50) {
		w := crowdedWindows(seed, 2.5e6, sent, []int{8, 8, 8, 8}, sent, []int{6, 6, 24, 6}, p.CrowdedWindow)
		got, _, ok := pickCrowded(w, p)
		require.True(t, ok, "seed %d: named none", seed)
		require.Contains(t, []int{2, 6}, got, "seed %d", seed)
		_, _, ok = pickCrowded(crowdedWindows(seed, 2.5e6, sent, []int{8, 8, 8, 8}, sent, []int{8, 8, 8, 8}, p.CrowdedWindow), p)
		require.False(t, ok, "seed %d: even both ways", seed)
	}
}

// Nothing is named when the rule is off, before every path's window
// holds CrowdedWindow samples, or with fewer than 3 paths carrying data.
func TestPickCrowdedNeeds(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	mine, total := []int{0, 0, 0, 1, 1, 2, 2, 3}, []int{12, 8, 6, 6}
	_, _, ok := pickCrowded(crowdedWindows(1, 2.5e6, mine, total, nil, nil, p.CrowdedWindow), p)
	require.True(t, ok)
	off := RepickPolicy{Crowded: -1}.withDefaults()
	_, _, ok = pickCrowded(crowdedWindows(1, 2.5e6, mine, total, nil, nil, off.CrowdedWindow), off)
	require.False(t, ok, "off")
	_, _, ok = pickCrowded(crowdedWindows(1, 2.5e6, mine, total, nil, nil, p.CrowdedWindow-1), p)
	require.False(t, ok, "a window short")
	w := crowdedWindows(1, 2.5e6, mine, total, nil, nil, p.CrowdedWindow)
	for i := 2; i < len(w); i++ {
		for k := range w[i] {
			w[i][k].BytesAcked = 0
		}
	}
	_, _, ok = pickCrowded(w, p)
	require.False(t, ok, "2 paths with data")
}

func TestCrowdJudge(t *testing.T) {
	require.True(t, crowdJudge(0.5, 0.9), "gained")
	require.True(t, crowdJudge(0.5, 0.5), "the same")
	require.False(t, crowdJudge(0.5, 0.4), "lost")
	require.True(t, crowdJudge(0.5, 0), "unknown")
}

func TestRepickPolicyCrowdedDefaults(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	require.Equal(t, 1.5, p.Crowded)
	require.Equal(t, 5, p.CrowdedWindow)
	require.Equal(t, -1.0, RepickPolicy{Crowded: -1}.withDefaults().Crowded)
	require.Equal(t, 1.5, RepickPolicy{Crowded: 0.5}.withDefaults().Crowded)
	require.Equal(t, 2.0, RepickPolicy{Crowded: 2}.withDefaults().Crowded)
	require.Equal(t, 4, RepickPolicy{CrowdedWindow: 1}.withDefaults().CrowdedWindow)
	require.Equal(t, 6, RepickPolicy{CrowdedWindow: 50, EarlyWindow: 6}.withDefaults().CrowdedWindow, "at most EarlyWindow")
}

// A re-pick judged by its path waits for settle, not for the rate; undone
// ones double the interval only after flatRuns in a row.
func TestRepickPacerByPath(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	s := time.Second
	r := newRepickPacer(p, 0)
	r.made(s, 100, false)
	r.byPath = true
	require.Equal(t, repickPending, r.judge(10*s, 1), "judged by its path")
	require.False(t, r.allow(10*s, false))
	r.settle(true)
	require.True(t, r.allow(2*s, false))
	for i := range flatRuns {
		r.made(s, 100, false)
		r.byPath = true
		r.settle(false)
		if i < flatRuns-1 {
			require.Equal(t, p.Interval, r.interval, "undo %d", i)
		}
	}
	require.Equal(t, 2*p.Interval, r.interval)
}

// shareWindows models one connection's paths on one link, path i taking
// shares[i] of rate bytes per sample, each sample within ±20 % at random
// (seeded), with 2 ms of queue.
func shareWindows(seed uint64, rate float64, shares []float64, n int) [][]pathSample {
	rng := rand.New(rand.NewPCG(seed, 11))
	w := make([][]pathSample, len(shares))
	cum := make([]pathSample, len(shares))
	for range n {
		for i, s := range shares {
			cum[i].BytesAcked += int64(rate * s * (0.8 + 0.4*rng.Float64()))
			cum[i].Queue = 2 * time.Millisecond
			w[i] = append(w[i], cum[i])
		}
	}
	return w
}

// crowdMoves runs a connection's crowded decisions for d at the steady
// policy, a decision every Sample on fresh windows (from shares(k) at
// decision k), each move waiting a window (its judgement) before the next
// decision, and returns the times of the moves.
func crowdMoves(c *crowdPacer, from, d time.Duration, shares func(k int) []float64) []time.Duration {
	p := RepickPolicy{}.withDefaults()
	var moves []time.Duration
	k := 0
	for now := from; now < from+d; now += p.Sample {
		k++
		if _, _, ok := c.pick(1, now, shareWindows(uint64(k), 2.5e6, shares(k), p.CrowdedWindow), p); ok {
			moves = append(moves, now)
			c.moved(1, now, p)
			now += time.Duration(p.CrowdedWindow-1) * p.Sample
		}
	}
	return moves
}

// A connection over one link whose paths keep unequal shares of it (path
// 0 half the others': pickCrowded names it in every window) is moved a
// 6 times in 10 s (at 0, 0.5, 1, 2, 4 and 8 s), not every window (20
// times); once found even for a window, its next named path is moved at
// once.
func TestCrowdPacerBacksOffWhereMovesCannotHelp(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	unequal := func(int) []float64 { return []float64{0.5, 1, 1, 1, 1, 1, 1, 1} }
	_, _, ok := pickCrowded(shareWindows(1, 2.5e6, unequal(0), p.CrowdedWindow), p)
	require.True(t, ok, "named")
	var c crowdPacer
	moves := crowdMoves(&c, 0, 10*time.Second, unequal)
	require.LessOrEqual(t, len(moves), 6, "moves at %v", moves)
	require.GreaterOrEqual(t, len(moves), 2, "moves at %v", moves)
	require.Zero(t, moves[0])
	require.Equal(t, time.Duration(p.CrowdedWindow)*p.Sample, moves[1], "the second move not delayed")

	// Found even on CrowdedWindow decisions in a row: the wait is gone.
	even := func(int) []float64 { return []float64{1, 1, 1, 1, 1, 1, 1, 1} }
	at := 10 * time.Second
	require.Empty(t, crowdMoves(&c, at, time.Duration(p.CrowdedWindow)*p.Sample, even))
	at += time.Duration(p.CrowdedWindow) * p.Sample
	moves = crowdMoves(&c, at, p.Sample, unequal)
	require.Equal(t, []time.Duration{at}, moves)

	// Found even on fewer decisions in a row: it still waits.
	var c2 crowdPacer
	moves = crowdMoves(&c2, 0, 2*time.Second-p.Sample, unequal)
	require.Equal(t, []time.Duration{0, 500 * time.Millisecond, time.Second}, moves)
	require.Empty(t, crowdMoves(&c2, 1100*time.Millisecond, time.Duration(p.CrowdedWindow-1)*p.Sample, even))
	require.Empty(t, crowdMoves(&c2, 1500*time.Millisecond, 500*time.Millisecond, unequal), "before 2 s")
	require.Equal(t, []time.Duration{2 * time.Second}, crowdMoves(&c2, 2*time.Second, p.Sample, unequal))
}

// A path that carried nothing either way while the others ran alike is
// named only if it is cut (PathSuspect, PathDead), not if it was idle
// (PathGood, PathSkip: the scheduler gave it nothing).
func TestPickCrowdedSkipsIdlePaths(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	for _, c := range []struct {
		state metaroce.PathState
		named bool
	}{{metaroce.PathGood, false}, {metaroce.PathSkip, false}, {metaroce.PathSuspect, true}, {metaroce.PathDead, true}} {
		for seed := range uint64(20) {
			w := crowdedWindows(seed, 2.5e6, []int{0, 1, 2, 3, 0, 1, 2, 3}, []int{8, 8, 8, 8}, nil, nil, p.CrowdedWindow)
			for k := range w[3] {
				w[3][k].BytesAcked = 0
				w[3][k].State = c.state
			}
			got, _, ok := pickCrowded(w, p)
			require.Equal(t, c.named, ok, "state %v seed %d: named %d", c.state, seed, got)
			if ok {
				require.Equal(t, 3, got)
			}
		}
	}
}
