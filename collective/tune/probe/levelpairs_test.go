package probe_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/gocoll/gocoll/collective/tune/probe"
	"github.com/gocoll/gocoll/topology"
)

// levelPairsScan is LevelPairs' definition as a scan (quadratic): each
// rank in order with the lowest unpaired rank above it met at level l.
func levelPairsScan(topo topology.Topology, l int) (pairs [][2]int, k int) {
	n := topo.Size()
	at := func(a, b int) int {
		ra, _ := topo.Rank(a)
		rb, _ := topo.Rank(b)
		switch {
		case ra.Host == rb.Host:
			return 0
		case ra.SiteName() == rb.SiteName():
			return 1
		}
		return 2
	}
	paired := make([]bool, n)
	groups := map[string]int{}
	for a := range n {
		if paired[a] {
			continue
		}
		for b := a + 1; b < n; b++ {
			if paired[b] || at(a, b) != l {
				continue
			}
			paired[a], paired[b] = true, true
			pairs = append(pairs, [2]int{a, b})
			ra, _ := topo.Rank(a)
			key := [3]string{"rank " + strconv.Itoa(a), "host " + ra.Host, "site " + ra.SiteName()}[l]
			groups[key]++
			k = max(k, groups[key])
			break
		}
	}
	return pairs, k
}

// randomLayout places n ranks on random hosts of random sites (a host on
// one site), in rank order.
func randomLayout(t testing.TB, rng *rand.Rand, n, hosts, sites int) topology.Topology {
	var rs []topology.RankInfo
	local := map[int]int{}
	for r := range n {
		h := rng.IntN(hosts)
		rs = append(rs, topology.RankInfo{Rank: r, Host: fmt.Sprintf("h%d", h), Site: fmt.Sprintf("s%d", h%sites), LocalRank: local[h]})
		local[h]++
	}
	tp, err := topology.New(rs)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// LevelPairs (per-part queues and a heap a group) pairs exactly as its
// definition's scan does, on 500 random layouts, every level.
func TestLevelPairsAsTheScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 2))
	for i := range 500 {
		topo := randomLayout(t, rng, 1+rng.IntN(40), 1+rng.IntN(8), 1+rng.IntN(4))
		for l := range 3 {
			p, k := probe.LevelPairs(topo, l)
			wp, wk := levelPairsScan(topo, l)
			if !reflect.DeepEqual(p, wp) || k != wk {
				t.Fatalf("layout %d (%d ranks), level %d: %v k %d, the scan %v k %d", i, topo.Size(), l, p, k, wp, wk)
			}
		}
	}
}

// LevelPairs at 65536 ranks in Slurm's cyclic placement over 8192 hosts (2
// sites), every level: the scan took 1m55s for the host level alone (load
// ~20).
func BenchmarkLevelPairsCyclic65536(b *testing.B) {
	const hosts, perHost = 8192, 8
	var rs []topology.RankInfo
	for r := range hosts * perHost {
		h := r % hosts
		rs = append(rs, topology.RankInfo{Rank: r, Host: "h" + strconv.Itoa(h), Site: "s" + strconv.Itoa(h%2), LocalRank: r / hosts})
	}
	topo, err := topology.New(rs)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for l := range 3 {
			probe.LevelPairs(topo, l)
		}
	}
}
