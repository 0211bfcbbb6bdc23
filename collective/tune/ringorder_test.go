package tune

import (
	"fmt"
	"testing"

	"github.com/gocoll/gocoll/topology"
)

// cyclic is sites × hosts × ranks placed as Slurm's cyclic distribution
// does: rank r on host r mod (sites × hosts), hosts alternating sites.
func cyclic(t testing.TB, sites, hosts, ranks int) topology.Topology {
	nh := sites * hosts
	rs := make([]topology.RankInfo, nh*ranks)
	local := map[int]int{}
	for r := range rs {
		h := r % nh
		rs[r] = topology.RankInfo{Rank: r, Host: fmt.Sprintf("h%d", h), Site: fmt.Sprintf("s%d", h%sites), LocalRank: local[h]}
		local[h]++
	}
	tp, err := topology.New(rs)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// The ring AllReduce is predicted in rank order, the order collective's
// ring runs in: on 2 x 2 x 2 placed cyclically every step of the ring
// crosses between sites, so at 4 and 64 MiB the prediction is about 4 times
// that of the same ranks numbered site by site (gocoll sim: 295.6 ms and
// 4.70 s cyclic against 77.4 ms and 1.178 s), where a ring in the
// topology's order would cost the same on both.
func TestRingInRankOrder(t *testing.T) {
	for _, bytes := range []int{4 << 20, 64 << 20} {
		ring := func(topo topology.Topology) float64 {
			ps, err := Predict(AllReduce, Input{Topology: topo, Bytes: bytes, ChunkBytes: 512 << 10, Links: DefaultLinks()})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				if p.Algorithm == "ring" {
					return p.Time.Seconds()
				}
			}
			t.Fatal("no ring prediction")
			return 0
		}
		cyc, grouped := ring(cyclic(t, 2, 2, 2)), ring(grid(t, 2, 2, 2))
		t.Logf("%d B: ring cyclic %.4g s, site by site %.4g s (%.2fx)", bytes, cyc, grouped, cyc/grouped)
		if r := cyc / grouped; r < 3.5 || r > 4.5 {
			t.Errorf("%d B: ring on the cyclic placement %.4g s, %.2f times the site-by-site %.4g s, want about 4", bytes, cyc, r, grouped)
		}
	}
}
