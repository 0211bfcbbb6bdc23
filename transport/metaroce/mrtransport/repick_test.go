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
	}{
		{"8 paths spread 2 per link: a try", eq4, []int{0, 0, 1, 1, 2, 2, 3, 3}, false, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"a link unused", eq4, []int{0, 0, 0, 1, 1, 1, 2, 2}, false, []int{0, 1, 2, 3, 4, 5}},
		{"a link unused, losses only", eq4, []int{0, 0, 0, 1, 1, 1, 2, 2}, true, []int{0, 1, 2, 3, 4, 5}},
		{"three share, one alone", eq4, []int{0, 0, 0, 1, 1, 2, 2, 3}, false, []int{0, 1, 2}},
		{"one bottleneck for all: a try", eq4, []int{0, 0, 0, 0, 0, 0, 0, 0}, false, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"two on one link, one unused: a try", eq4[:2], []int{0, 0}, false, []int{0, 1}},
		{"spread one per link", eq4, []int{0, 1, 2, 3}, false, nil},
		{"one per link, unequal", []float64{10e6, 20e6, 30e6, 40e6}, []int{0, 1, 2, 3}, false, nil},
		{"a slow pair on two links", []float64{10e6, 10e6, 40e6}, []int{0, 1, 2}, false, nil},
		{"idle paths", eq4, []int{-1, -1, -1, -1}, false, nil},
	} {
		for seed := range uint64(50) {
			t.Run(fmt.Sprintf("%s/seed=%d", c.name, seed), func(t *testing.T) {
				got, ok := pickRepick(ecmpWindows(seed, c.capacity, c.onLink, c.lossy, p.Window), p)
				if c.want == nil {
					require.False(t, ok, "picked path %d", got)
					return
				}
				require.True(t, ok, "picked none")
				require.Contains(t, c.want, got)
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
	_, ok := pickRepick(w, p)
	require.False(t, ok)
}

func TestRepickPacer(t *testing.T) {
	p := RepickPolicy{}.withDefaults()
	s := time.Second
	r := newRepickPacer(p, 0)
	require.False(t, r.allow(s/2, 100))
	require.True(t, r.allow(s, 100))
	r.made(s, 100)
	require.False(t, r.allow(s+s/2, 100))
	require.False(t, r.allow(2*s, 100), "no gain: the interval doubles to 2 s")
	require.True(t, r.allow(3*s, 100))
	r.made(3*s, 100)
	require.False(t, r.allow(7*s-1, 101), "no gain again: 4 s")
	require.True(t, r.allow(7*s, 101))
	r.made(7*s, 100)
	require.True(t, r.allow(15*s, 200), "gain at the judgement (8 s later): back to 1 s")
	r.made(15*s, 200)
	require.True(t, r.allow(16*s, 300))
	for i := range 20 {
		r.made(time.Duration(100+i*100)*s, 1)
		r.allow(time.Duration(100+i*100)*s+r.interval, 1)
	}
	require.Equal(t, p.MaxInterval, r.interval, "the interval is bounded")
}
