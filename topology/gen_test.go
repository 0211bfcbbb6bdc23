package topology

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// layoutSpec gives, per site, per host, the number of ranks on that host.
type layoutSpec [][]int

func (s layoutSpec) size() int {
	n := 0
	for _, hosts := range s {
		for _, k := range hosts {
			n += k
		}
	}
	return n
}

// buildTopology places the slots of spec (site by site, host by host) on
// ranks: slot i gets rank rankOfSlot[i]. Local ranks follow rank order on
// each host. The result's Ranks are shuffled by rng when rng is not nil.
func buildTopology(spec layoutSpec, rankOfSlot []int, rng *rand.Rand) Topology {
	var ranks []RankInfo
	i := 0
	for s, hosts := range spec {
		for h, k := range hosts {
			onHost := slices.Clone(rankOfSlot[i : i+k])
			slices.Sort(onHost)
			for lr, r := range onHost {
				ranks = append(ranks, RankInfo{
					Rank: r, Host: fmt.Sprintf("s%d-h%d", s, h), Site: fmt.Sprintf("site%d", s), LocalRank: lr,
				})
			}
			i += k
		}
	}
	if rng != nil {
		rng.Shuffle(len(ranks), func(a, b int) { ranks[a], ranks[b] = ranks[b], ranks[a] })
	}
	return Topology{Ranks: ranks}
}

// identity returns 0..n-1.
func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// interleaved numbers the slots of spec round robin across sites, so that
// consecutive ranks are on different sites whenever possible.
func interleaved(spec layoutSpec) []int {
	var perSite [][]int // slot indices per site
	i := 0
	for _, hosts := range spec {
		var slots []int
		for _, k := range hosts {
			for range k {
				slots = append(slots, i)
				i++
			}
		}
		perSite = append(perSite, slots)
	}
	rankOfSlot := make([]int, i)
	r := 0
	for round := 0; r < i; round++ {
		for _, slots := range perSite {
			if round < len(slots) {
				rankOfSlot[slots[round]] = r
				r++
			}
		}
	}
	return rankOfSlot
}

func randomSpec(rng *rand.Rand, maxSites, maxHosts, maxLocal int) layoutSpec {
	spec := make(layoutSpec, 1+rng.IntN(maxSites))
	for s := range spec {
		spec[s] = make([]int, 1+rng.IntN(maxHosts))
		for h := range spec[s] {
			spec[s][h] = 1 + rng.IntN(maxLocal)
		}
	}
	return spec
}

// namedCase is a topology for property tests.
type namedCase struct {
	name string
	spec layoutSpec
	topo Topology
}

// propertyCases returns the fixed corner cases plus count random topologies
// drawn from a fixed seed, each with grouped, interleaved or random rank
// numbering.
func propertyCases(count int) []namedCase {
	rng := rand.New(rand.NewPCG(1, 2))
	uneven := layoutSpec{{2}, {1, 1, 2, 1, 3}, {2, 2}}
	cases := []namedCase{
		{name: "one rank", spec: layoutSpec{{1}}},
		{name: "one site", spec: layoutSpec{{2, 3, 1}}},
		{name: "one host", spec: layoutSpec{{4}}},
		{name: "one rank per site", spec: layoutSpec{{1}, {1}, {1}}},
		{name: "uneven grouped", spec: uneven},
		{name: "uneven interleaved", spec: uneven},
	}
	for i := range cases {
		order := identity(cases[i].spec.size())
		if cases[i].name == "uneven interleaved" {
			order = interleaved(cases[i].spec)
		}
		cases[i].topo = buildTopology(cases[i].spec, order, rng)
	}
	for i := range count {
		spec := randomSpec(rng, 4, 4, 3)
		var order []int
		switch i % 3 {
		case 0:
			order = identity(spec.size())
		case 1:
			order = interleaved(spec)
		default:
			order = rng.Perm(spec.size())
		}
		cases = append(cases, namedCase{
			name: fmt.Sprintf("random %d %v order %d", i, spec, i%3),
			spec: spec,
			topo: buildTopology(spec, order, rng),
		})
	}
	return cases
}
