package mrtransport

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ecmpWindows models paths hashed onto links: link l carries capacity[l]
// bytes per sample, shared equally by the paths on it (onLink[i] is path
// i's link, -1 for a path with no data), and has its own queueing delay, a
// seeded random walk (so two links' delays are independent), which every
// path on it sees plus a little noise. lossy links also drop packets at
// random samples, the same for all their paths.
func ecmpWindows(seed uint64, capacity []float64, onLink []int, lossy bool, n int) [][]pathSample {
	rng := rand.New(rand.NewPCG(seed, 1))
	share := make([]int, len(capacity))
	for _, l := range onLink {
		if l >= 0 {
			share[l]++
		}
	}
	q := make([]float64, len(capacity)) // seconds
	for l := range q {
		q[l] = 0.002
	}
	w := make([][]pathSample, len(onLink))
	cum := make([]pathSample, len(onLink))
	for range n {
		loss := make([]int64, len(capacity))
		for l := range q {
			q[l] = min(max(q[l]+(rng.Float64()-0.5)*0.002, 0.0002), 0.01)
			if lossy && rng.IntN(3) == 0 {
				loss[l] = 1 + rng.Int64N(3)
			}
		}
		for i, l := range onLink {
			if l >= 0 {
				cum[i].BytesAcked += int64(capacity[l] / float64(share[l]))
				cum[i].Queue = time.Duration((q[l] + rng.Float64()*0.0001) * float64(time.Second))
				cum[i].Lost += loss[l]
			}
			w[i] = append(w[i], cum[i])
		}
	}
	return w
}

func TestPickRepick(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	eq4 := []float64{25e6, 25e6, 25e6, 25e6}
	for _, c := range []struct {
		name     string
		capacity []float64
		onLink   []int
		lossy    bool
		want     []int // paths that may be picked; nil: none
		try      bool  // the pick is a try
	}{
		{"8 paths spread 2 per link: a try", eq4, []int{0, 0, 1, 1, 2, 2, 3, 3}, false, []int{0, 1, 2, 3, 4, 5, 6, 7}, true},
		{"a link unused", eq4, []int{0, 0, 0, 1, 1, 1, 2, 2}, false, []int{0, 1, 2, 3, 4, 5}, false},
		{"a link unused, losses only", eq4, []int{0, 0, 0, 1, 1, 1, 2, 2}, true, []int{0, 1, 2, 3, 4, 5}, false},
		{"three share, one alone", eq4, []int{0, 0, 0, 1, 1, 2, 2, 3}, false, []int{0, 1, 2}, false},
		{"one bottleneck for all: a try", eq4, []int{0, 0, 0, 0, 0, 0, 0, 0}, false, []int{0, 1, 2, 3, 4, 5, 6, 7}, true},
		{"two on one link, one unused: a try", eq4[:2], []int{0, 0}, false, []int{0, 1}, true},
		{"spread one per link", eq4, []int{0, 1, 2, 3}, false, nil, false},
		{"one per link, unequal", []float64{10e6, 20e6, 30e6, 40e6}, []int{0, 1, 2, 3}, false, nil, false},
		{"a slow pair on two links", []float64{10e6, 10e6, 40e6}, []int{0, 1, 2}, false, nil, false},
		{"idle paths", eq4, []int{-1, -1, -1, -1}, false, nil, false},
	} {
		for seed := range uint64(50) {
			t.Run(fmt.Sprintf("%s/seed=%d", c.name, seed), func(t *testing.T) {
				got, try, ok := pickRepick(ecmpWindows(seed, c.capacity, c.onLink, c.lossy, p.Window), 0, p)
				if c.want == nil {
					require.False(t, ok, "picked path %d", got)
					return
				}
				require.True(t, ok, "picked none")
				require.Contains(t, c.want, got)
				require.Equal(t, c.try, try, "a try")
			})
		}
	}
}

// A path with data and no congestion (the application, not the network,
// limits it) is never one of a pair, however its rate compares.
func TestPickRepickNeedsCongestion(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	w := make([][]pathSample, 3)
	for i := range w {
		for k := range p.Window {
			rate := int64(1e6)
			if i == 2 {
				rate = 4e6
			}
			w[i] = append(w[i], pathSample{BytesAcked: int64(k) * rate})
		}
	}
	_, _, ok := pickRepick(w, 0, p)
	require.False(t, ok)
}

// A connection of two paths, both congested, at rates more than a quarter
// apart (one link split 2:1 by their windows, or two links of unequal
// rates) tries the slower; not when either path is uncongested, or the
// rates are within a quarter on separate links. With three paths the
// crowded rule scores such cases, and pickRepick names none.
func TestPickRepickTwoPathsUneven(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	split := func(rates [2]float64, queue [2]time.Duration) [][]pathSample {
		w := make([][]pathSample, 2)
		for i := range w {
			for k := range p.Window {
				w[i] = append(w[i], pathSample{BytesAcked: int64(float64(k) * rates[i]), Queue: queue[i]})
			}
		}
		return w
	}
	ms := time.Millisecond
	for _, c := range []struct {
		name string
		w    [][]pathSample
		want int // -1: none
	}{
		{"one link split 2:1", split([2]float64{2e6, 1e6}, [2]time.Duration{ms, ms}), 1},
		{"one link split 1:2", split([2]float64{1e6, 2e6}, [2]time.Duration{ms, 2 * ms}), 0},
		{"the slower uncongested", split([2]float64{2e6, 1e6}, [2]time.Duration{ms, 0}), -1},
		{"within a quarter", split([2]float64{2e6, 1.7e6}, [2]time.Duration{ms, ms}), -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, try, ok := pickRepick(c.w, 0, p)
			if c.want < 0 {
				require.False(t, ok, "picked path %d", got)
				return
			}
			require.True(t, ok, "picked none")
			require.Equal(t, c.want, got)
			require.True(t, try, "a try")
		})
	}
	for seed := range uint64(50) {
		got, try, ok := pickRepick(ecmpWindows(seed, []float64{10e6, 40e6}, []int{0, 1}, false, p.Window), 0, p)
		require.True(t, ok && try && got == 0, "seed %d: two links of unequal rates: got %d try %v ok %v", seed, got, try, ok)
	}
}

// Two paths sharing a link while the peak rate (seen before, on a path
// alone) is higher: the pick is on evidence, not a try.
func TestPickRepickPeakIsEvidence(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	w := ecmpWindows(1, []float64{25e6, 25e6}, []int{0, 0}, false, p.Window)
	_, try, ok := pickRepick(w, 0, p)
	require.True(t, ok)
	require.True(t, try)
	_, try, ok = pickRepick(w, 25e6, p)
	require.True(t, ok)
	require.False(t, try)
}

func TestRepickPacer(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	s := time.Second
	r := newRepickPacer(p, 0)
	require.False(t, r.allow(s/2, false))
	require.True(t, r.allow(s, false))
	r.made(s, 100, false)
	require.False(t, r.allow(s+s/2, false))
	require.Equal(t, repickPending, r.judge(s+s/2, 100))
	require.Equal(t, repickFlat, r.judge(2*s, 100), "no gain on evidence: the interval stays 1 s")
	require.True(t, r.allow(2*s, false))
	for i := 2; i < flatRuns; i++ {
		r.made(time.Duration(i)*s, 100, false)
		require.Equal(t, repickFlat, r.judge(time.Duration(i+1)*s, 100))
	}
	require.Equal(t, p.Interval, r.interval, "flatRuns-1 flat re-picks on evidence in a row")
	at := time.Duration(flatRuns) * s
	r.made(at, 100, false)
	require.Equal(t, repickFlat, r.judge(at+s, 100))
	require.Equal(t, 2*p.Interval, r.interval, "the flatRuns-th doubles the interval")
	require.False(t, r.allow(at+s, false))
	require.True(t, r.allow(at+s, true), "tries have their own interval")

	at += 2 * s
	r.made(at, 100, false)
	require.Equal(t, repickLoss, r.judge(at+s, 90), "a loss: undo, and 4 s")
	require.False(t, r.allow(at+4*s-1, false))
	require.True(t, r.allow(at+4*s, false))
	at += 4 * s
	r.made(at, 100, false)
	require.Equal(t, repickGain, r.judge(at+s, 200), "a gain: back to 1 s")
	require.True(t, r.allow(at+s, false))

	r.made(at+s, 100, true)
	require.Equal(t, repickFlat, r.judge(at+2*s, 100))
	require.Equal(t, 2*p.Interval, r.explore, "a flat try doubles the interval of tries")
	for i := range 20 {
		at := time.Duration(1000+i*100) * s
		r.made(at, 1, true)
		r.judge(at+s, 1)
	}
	require.Equal(t, p.MaxInterval, r.explore, "the interval of tries is bounded")
	require.Equal(t, p.Interval, r.interval, "tries leave the other interval")
}

func TestRepickPolicyEarlyDefaults(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	require.Equal(t, 2*time.Second, p.Early)
	e := p.early()
	require.Equal(t, 20*time.Millisecond, e.Sample)
	require.Equal(t, 10, e.Window)
	require.Equal(t, 200*time.Millisecond, e.Interval)
	require.Equal(t, 800*time.Millisecond, e.MaxInterval)
	require.Equal(t, p.Correlation, e.Correlation)
	off := RepickPolicy{Early: -1}.withDefaults()
	require.Zero(t, off.Early)
	c := RepickPolicy{Sample: 50 * time.Millisecond, Window: 5, EarlySample: time.Second, EarlyWindow: 40, EarlyInterval: time.Millisecond}.withDefaults()
	require.Equal(t, 50*time.Millisecond, c.EarlySample, "at most Sample")
	require.Equal(t, 5, c.EarlyWindow, "at most Window")
	require.Equal(t, 250*time.Millisecond, c.EarlyInterval, "at least EarlySample × EarlyWindow")
}

// The early phase samples no faster than every two round trips and lasts
// longer in proportion, up to Early × Sample / EarlySample: 2 s up to
// 10 ms RTT, 4 s at 20 ms, 10 s from 50 ms.
func TestRepickEarlyPhaseScalesWithRTT(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	ms := time.Millisecond
	for _, c := range []struct{ rtt, sample, length time.Duration }{
		{0, 20 * ms, 2 * time.Second},
		{4 * ms, 20 * ms, 2 * time.Second},
		{20 * ms, 40 * ms, 4 * time.Second},
		{50 * ms, 100 * ms, 10 * time.Second},
		{100 * ms, 100 * ms, 10 * time.Second},
	} {
		require.Equal(t, c.sample, earlySample(p, c.rtt), "sample at %v RTT", c.rtt)
		require.Equal(t, c.length, earlyLength(p, c.rtt), "phase at %v RTT", c.rtt)
	}
}

// TestEarlyClockCountsBusyTime: the early phase's clock starts with the
// first sample that sees data and then counts only the intervals over
// which the data counters moved.
func TestEarlyClockCountsBusyTime(t *testing.T) {
	var c earlyClock
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	steps := []struct {
		at      int
		carried int64
		started bool
		busy    int
	}{
		{0, 0, false, 0},
		{20, 0, false, 0},       // no data yet
		{40, 5, true, 0},        // the first data: the clock starts
		{60, 9, true, 20},       // busy
		{80, 9, true, 20},       // idle: not counted
		{3000, 9, true, 20},     // a long pause: not counted
		{3020, 100, true, 40},   // busy again
		{3040, 10000, true, 60}, // busy
		{3060, 10000, true, 60}, // idle
	}
	for _, s := range steps {
		busy := c.tick(ms(s.at), s.carried)
		if c.started != s.started || busy != ms(s.busy) {
			t.Fatalf("at %d ms, carried %d: started %v, busy %v; want %v, %d ms", s.at, s.carried, c.started, busy, s.started, s.busy)
		}
	}
}

// TestSteadyLoad: a window counts as evidence for the crowded rule only
// when the connection carried data, either way, in every interval of it.
func TestSteadyLoad(t *testing.T) {
	mk := func(sent, recv [][]int64) [][]pathSample { // per path, per interval
		w := make([][]pathSample, len(sent))
		for i := range sent {
			var c pathSample
			w[i] = append(w[i], c)
			for k := range sent[i] {
				c.Acked += sent[i][k]
				c.Recv += recv[i][k]
				w[i] = append(w[i], c)
			}
		}
		return w
	}
	zero := []int64{0, 0, 0, 0}
	steady := []int64{90, 110, 100, 95}
	lull := []int64{200, 180, 0, 0}   // a pause at the window's end
	dip := []int64{100, 100, 10, 100} // one interval under a quarter of the mean
	for _, c := range []struct {
		name       string
		sent, recv [][]int64
		want       bool
	}{
		{"received steadily", [][]int64{zero, zero, zero}, [][]int64{steady, steady, lull}, true},
		{"sent steadily", [][]int64{steady, steady, steady}, [][]int64{zero, zero, zero}, true},
		{"a pause", [][]int64{zero, zero, zero}, [][]int64{lull, lull, lull}, false},
		{"a dip", [][]int64{zero, zero, zero}, [][]int64{dip, dip, dip}, false},
		{"sent steadily, received with a pause", [][]int64{steady, steady, steady}, [][]int64{lull, zero, zero}, false},
		{"nothing", [][]int64{zero, zero, zero}, [][]int64{zero, zero, zero}, false},
		{"sent steadily, a trickle back", [][]int64{steady, steady, steady}, [][]int64{{0, 1, 0, 0}, zero, zero}, true},
		{"received steadily, a trickle sent", [][]int64{{0, 0, 3, 0}, zero, zero}, [][]int64{steady, steady, steady}, true},
		{"a trickle alone, with a pause", [][]int64{{0, 1, 0, 0}, zero, zero}, [][]int64{zero, zero, zero}, false},
	} {
		if got := steadyLoad(mk(c.sent, c.recv)); got != c.want {
			t.Errorf("%s: steadyLoad %v, want %v", c.name, got, c.want)
		}
	}
	// One 9000-byte packet sent back beside a steady receive: a trickle in
	// packets, though its bytes outnumber the packets received.
	w := mk([][]int64{{0, 1, 0, 0}, zero, zero}, [][]int64{steady, steady, steady})
	w[0][2].BytesAcked, w[0][3].BytesAcked, w[0][4].BytesAcked = 9000, 9000, 9000
	if !steadyLoad(w) {
		t.Error("a 9000-byte packet back beside a steady receive: steadyLoad false, want true")
	}
	w = mk([][]int64{steady, steady}, [][]int64{zero, zero})
	w[1] = w[1][:3]
	if steadyLoad(w) {
		t.Error("unequal windows: steadyLoad true")
	}
}

// pickMore moves, with the path pickRepick named on evidence, only paths
// whose link keeps a path that stays, on the most crowded links: over 50
// seeds of each placement, no link that carried a path is left without
// one, the paths moved lie on the links of from, and where those links
// hold spare pairs, some are moved with the first.
func TestPickMoreKeepsEveryLinkUsed(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	eq4 := []float64{25e6, 25e6, 25e6, 25e6}
	for _, c := range []struct {
		name   string
		onLink []int
		from   []int // the links paths may be moved from
		more   bool  // some path is moved with the first
	}{
		{"4 3 1 0", []int{0, 0, 0, 0, 1, 1, 1, 2}, []int{0}, true},
		{"3 3 2 0", []int{0, 0, 0, 1, 1, 1, 2, 2}, []int{0, 1}, true},
		{"5 2 1 0", []int{0, 0, 0, 0, 0, 1, 1, 2}, []int{0}, true},
		{"3 2 2 1", []int{0, 0, 0, 1, 1, 2, 2, 3}, []int{0}, true},
		{"2 1 1 0: one pair", []int{0, 0, 1, 2}, []int{0}, false},
	} {
		for seed := range uint64(50) {
			t.Run(fmt.Sprintf("%s/seed=%d", c.name, seed), func(t *testing.T) {
				w := ecmpWindows(seed, eq4, c.onLink, false, p.Window)
				first, try, ok := pickRepick(w, 0, p)
				require.True(t, ok, "picked none")
				require.False(t, try, "a try")
				more := pickMore(w, 0, p, first, earlyMoves)
				require.Less(t, len(more), earlyMoves)
				moved := map[int]bool{first: true}
				for _, m := range append([]int{first}, more...) {
					require.Contains(t, c.from, c.onLink[m], "path %d moved: %d %v", m, first, more)
				}
				for _, m := range more {
					require.False(t, moved[m], "path %d moved twice: %d %v", m, first, more)
					moved[m] = true
				}
				for l := range eq4 {
					had, kept := false, false
					for i, pl := range c.onLink {
						had = had || pl == l
						kept = kept || pl == l && !moved[i]
					}
					require.Equal(t, had, kept, "link %d left without a path: moved %d %v", l, first, more)
				}
				if c.more {
					require.NotEmpty(t, more, "moved only %d", first)
				} else {
					require.Empty(t, more, "moved %v with %d", more, first)
				}
			})
		}
	}
}

// decides hands a connection to its sending end where the lower-ranked
// end only receives, and to no end between the two thresholds.
func TestDecides(t *testing.T) {
	win := func(sent, recv int64) [][]pathSample {
		return [][]pathSample{{{}, {Acked: sent, Recv: recv}}}
	}
	for _, c := range []struct {
		name                string
		lowSent, lowRecv    int64 // the lower end's counters (the higher's are the mirror)
		lowDecides, highDec bool
	}{
		{"no data", 0, 0, true, false},
		{"both ways", 1000, 1000, true, false},
		{"the lower end sends", 1000, 0, true, false},
		{"the lower end only receives", 0, 1000, false, true},
		{"a trickle back", 10, 1000, false, true},
		{"between the thresholds", 50, 1000, false, false},
		{"a sixteenth back", 63, 1000, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.lowDecides, decides(0, 7, win(c.lowSent, c.lowRecv)), "lower end")
			require.Equal(t, c.highDec, decides(7, 0, win(c.lowRecv, c.lowSent)), "higher end")
		})
	}
	require.True(t, decides(0, 7, [][]pathSample{{{Recv: 5}}}), "one sample: the lower end")
	require.False(t, decides(7, 0, [][]pathSample{{{Acked: 5}}}), "one sample: not the higher end")
}
