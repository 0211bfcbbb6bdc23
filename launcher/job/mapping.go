package job

import (
	"fmt"

	"github.com/gocoll/gocoll/internal/affinity"
	"github.com/gocoll/gocoll/launcher"
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
	// to the i-th core, at fork. More such ranks than cores is refused
	// without Oversubscribe, and wraps around with it. A rank on another
	// host binds itself the same way to that host's cores as it joins the
	// job (gocoll.Init: see launcher.BindCore), the i-th of its host name's
	// ranks to the i-th core of those it was started with; too many ranks
	// there fail their Init with the same one-line error. A remote program
	// that does not call gocoll.Init is not bound.
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
// s.BindTo (nil for every rank under BindNone, and for remote ranks);
// cores lists this host's cores as CPU numbers (affinity.Cores). It also
// returns, by rank, the binding a remote rank makes itself as it joins
// (launcher.BindCore; zero for local ranks and under BindNone): its index
// among the ranks of its host (by host name, in rank order) and their
// number there, whose cores only that host knows.
func bindCPUs(s Spec, placements []topology.Placement, local []bool, cores [][]int) ([][]int, []launcher.BindCore, error) {
	if s.BindTo != BindCore {
		return nil, nil, nil
	}
	n := 0                     // local ranks: on any of the names this host goes by
	onHost := map[string]int{} // remote ranks, by host
	for r, pl := range placements {
		if local[r] {
			n++
		} else {
			onHost[pl.Host]++
		}
	}
	cpus := make([][]int, len(placements))
	remote := make([]launcher.BindCore, len(placements))
	i := 0
	seen := map[string]int{}
	for r, pl := range placements {
		if !local[r] {
			remote[r] = launcher.BindCore{Index: seen[pl.Host], Of: onHost[pl.Host], Oversubscribe: s.Oversubscribe}
			seen[pl.Host]++
			continue
		}
		c, err := affinity.Pick(cores, i, n, s.Oversubscribe)
		if err != nil {
			return nil, nil, err
		}
		cpus[r] = c
		i++
	}
	return cpus, remote, nil
}

// binding is the CPUs rank r is bound to; nil: none.
func (p *plan) binding(r int) []int {
	if p.cpus == nil {
		return nil
	}
	return p.cpus[r]
}
