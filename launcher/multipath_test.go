package launcher

import (
	"testing"

	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
)

// multipathLevels: on 2 sites x 2 hosts x 2 ranks (the lab, auto
// transport), rank 0 reaches its host's other rank over shared memory
// (level 0: one path) and every rank of another host over MetaRoCE with 8
// paths (levels 1 and 2: multipath); a TCP peer (UDP blocked between two
// hosts) or a MetaRoCE connection of one path (GOCOLL_PATHS=1, or one
// listed path) makes its level single-path; a level with no peer says
// yes (the ranks that have one decide).
func TestMultipathLevels(t *testing.T) {
	var rs []topology.RankInfo
	for r, h := range []string{"a0", "a0", "a1", "a1", "b0", "b0", "b1", "b1"} {
		rs = append(rs, topology.RankInfo{Rank: r, Host: h, Site: h[:1], LocalRank: r % 2})
	}
	topo, err := topology.New(rs)
	if err != nil {
		t.Fatal(err)
	}
	stats := func(tr func(r int) string, paths func(r int) int) transport.Stats {
		var s transport.Stats
		for r := 1; r < 8; r++ {
			p := transport.PeerStats{Rank: r, Transport: tr(r)}
			if paths != nil {
				p.Paths = make([]transport.PathStats, paths(r))
			}
			s.Peers = append(s.Peers, p)
		}
		return s
	}
	auto := func(r int) string {
		if r == 1 {
			return transport.StatsSHM
		}
		return transport.StatsMetaRoCE
	}
	for _, c := range []struct {
		name  string
		s     transport.Stats
		paths int
		want  [3]bool
	}{
		{"auto", stats(auto, nil), 0, [3]bool{false, true, true}},
		{"auto, 8 paths listed", stats(auto, func(int) int { return 8 }), 1, [3]bool{false, true, true}},
		{"a TCP peer on the other site", stats(func(r int) string {
			if r == 6 {
				return transport.StatsTCP
			}
			return auto(r)
		}, nil), 0, [3]bool{false, true, false}},
		{"GOCOLL_PATHS=1", stats(auto, nil), 1, [3]bool{false, false, false}},
		{"one path listed to rank 2", stats(auto, func(r int) int { return map[bool]int{true: 1, false: 8}[r == 2] }), 0, [3]bool{false, false, true}},
		{"shm+tcp", stats(func(r int) string {
			return map[bool]string{true: transport.StatsSHM, false: transport.StatsTCP}[r == 1]
		}, nil), 0, [3]bool{false, false, false}},
		{"no peers", transport.Stats{}, 0, [3]bool{true, true, true}},
	} {
		if got := multipathLevels(topo, 0, c.s, c.paths); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
