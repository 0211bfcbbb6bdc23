package job

import (
	"fmt"
	"slices"

	"github.com/gocoll/gocoll/topology"
)

// How ranks are laid on the hosts' slots (Spec.MapBy, mpirun --map-by).
const (
	// MapBySlot (the default) fills each host's slots before the next
	// host's: ranks 0..S-1 on the first host of S slots, and so on.
	MapBySlot = "slot"
	// MapByNode deals ranks to the hosts in turn, one each round, within
	// a site (sites stay contiguous in rank order): with two hosts, even
	// ranks on the first, odd on the second.
	MapByNode = "node"
)

// How a local rank's process is bound to CPUs (Spec.BindTo, mpirun
// --bind-to).
const (
	// BindNone (the default) leaves the scheduler free to move ranks.
	BindNone = "none"
	// BindCore binds each rank to one core (all of its hardware threads)
	// of those the launcher may run on: the i-th rank started on this
	// host (in rank order, whatever name of the host it is listed under)
	// to the i-th core. More such ranks than cores is refused without
	// Oversubscribe, and wraps around with it.
	BindCore = "core"
)

// checkMapping checks Spec.MapBy and Spec.BindTo, filling their defaults.
func (s *Spec) checkMapping() error {
	switch s.MapBy {
	case "":
		s.MapBy = MapBySlot
	case MapBySlot, MapByNode:
	default:
		return fmt.Errorf("--map-by %q: want %s or %s", s.MapBy, MapBySlot, MapByNode)
	}
	switch s.BindTo {
	case "":
		s.BindTo = BindNone
	case BindNone, BindCore:
	default:
		return fmt.Errorf("--bind-to %q: want %s or %s", s.BindTo, BindCore, BindNone)
	}
	return nil
}

// mapPlacements returns the first np ranks of placements (every slot of
// the hosts, in AssignRanks' order) laid out as mode says, renumbered.
// Each host's local ranks count up in rank order either way.
func mapPlacements(placements []topology.Placement, np int, mode string) []topology.Placement {
	if mode != MapByNode {
		return placements[:np]
	}
	// Slots per host, hosts in order of appearance, by site.
	type slots struct {
		site  string
		queue []topology.Placement
	}
	var hostsInOrder []*slots
	byHost := map[string]*slots{}
	for _, pl := range placements {
		h := byHost[pl.Host]
		if h == nil {
			h = &slots{site: pl.Site}
			byHost[pl.Host] = h
			hostsInOrder = append(hostsInOrder, h)
		}
		h.queue = append(h.queue, pl)
	}
	out := make([]topology.Placement, 0, np)
	used := map[string]int{} // local ranks given out, by host
	for i := 0; i < len(hostsInOrder) && len(out) < np; {
		// The hosts of the site starting at i.
		j := i
		for j < len(hostsInOrder) && hostsInOrder[j].site == hostsInOrder[i].site {
			j++
		}
		for dealt := true; dealt && len(out) < np; {
			dealt = false
			for _, h := range hostsInOrder[i:j] {
				if len(h.queue) == 0 || len(out) == np {
					continue
				}
				pl := h.queue[0]
				h.queue = h.queue[1:]
				pl.Rank, pl.LocalRank = len(out), used[pl.Host]
				used[pl.Host]++
				out = append(out, pl)
				dealt = true
			}
		}
		i = j
	}
	return out
}

// bindCPUs returns, by rank, the CPUs each local rank is bound to under
// s.BindTo (nil for every rank under BindNone, and for remote ranks,
// which are not bound); cores lists this host's cores as CPU numbers.
func bindCPUs(s Spec, placements []topology.Placement, local []bool, cores [][]int) ([][]int, error) {
	if s.BindTo != BindCore {
		return nil, nil
	}
	if len(cores) == 0 {
		return nil, fmt.Errorf("--bind-to core: cannot tell this host's cores (sched_getaffinity)")
	}
	n := 0 // local ranks: on any of the names this host goes by
	for r := range placements {
		if local[r] {
			n++
		}
	}
	if n > len(cores) && !s.Oversubscribe {
		return nil, fmt.Errorf("--bind-to core: %d ranks on this host but %d cores to bind them to (--oversubscribe lets ranks share cores, or --bind-to none)", n, len(cores))
	}
	cpus := make([][]int, len(placements))
	i := 0
	for r := range placements {
		if local[r] {
			cpus[r] = slices.Clone(cores[i%len(cores)])
			i++
		}
	}
	return cpus, nil
}

// binding is the CPUs rank r is bound to; nil: none.
func (p *plan) binding(r int) []int {
	if p.cpus == nil {
		return nil
	}
	return p.cpus[r]
}
