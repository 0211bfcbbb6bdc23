//go:build unix

package job

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/internal/affinity"
	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/topology"
)

func TestMapPlacementsByNode(t *testing.T) {
	all, err := topology.AssignRanks([]topology.HostSlots{
		{Host: "a", Slots: 3, Site: "x"}, {Host: "b", Slots: 1, Site: "x"}, {Host: "c", Slots: 2, Site: "y"}, {Host: "d", Slots: 2, Site: "y"},
	})
	require.NoError(t, err)
	show := func(ps []topology.Placement) string {
		var b []string
		for i, p := range ps {
			require.Equal(t, i, p.Rank)
			b = append(b, fmt.Sprintf("%s%d", p.Host, p.LocalRank))
		}
		return strings.Join(b, " ")
	}
	require.Equal(t, "a0 a1 a2 b0 c0 c1 d0 d1", show(mapPlacements(all, 8, MapBySlot)))
	// Dealt host by host within each site; sites stay contiguous.
	require.Equal(t, "a0 b0 a1 a2 c0 d0 c1 d1", show(mapPlacements(all, 8, MapByNode)))
	require.Equal(t, "a0 b0 a1 a2 c0", show(mapPlacements(all, 5, MapByNode)))
	require.Equal(t, "a0 a1 a2", show(mapPlacements(all, 3, MapBySlot)))
}

func TestBindCPUs(t *testing.T) {
	pls, err := topology.AssignRanks([]topology.HostSlots{{Host: "here", Slots: 3}, {Host: "far", Slots: 2}, {Host: "other", Slots: 1}})
	require.NoError(t, err)
	local := []bool{true, true, true, false, false, false}
	cores := [][]int{{0, 4}, {1, 5}}
	s := Spec{BindTo: BindCore}
	_, _, err = bindCPUs(s, pls, local, cores)
	require.EqualError(t, err, "--bind-to core: 3 ranks on this host but 2 cores to bind them to (--oversubscribe lets ranks share cores, or --bind-to none)")
	s.Oversubscribe = true
	cpus, remote, err := bindCPUs(s, pls, local, cores)
	require.NoError(t, err)
	require.Equal(t, [][]int{{0, 4}, {1, 5}, {0, 4}, nil, nil, nil}, cpus)
	// Remote ranks bind themselves: index and number on their host.
	var got []string
	for _, b := range remote {
		got = append(got, b.String())
	}
	require.Equal(t, []string{"0/0", "0/0", "0/0", "0/2,oversubscribe", "1/2,oversubscribe", "0/1,oversubscribe"}, got)
	cpus, remote, err = bindCPUs(Spec{BindTo: BindNone}, pls, local, cores)
	require.NoError(t, err)
	require.Nil(t, cpus)
	require.Nil(t, remote)
	_, _, err = bindCPUs(s, pls, local, nil)
	require.EqualError(t, err, "--bind-to core: cannot tell this host's cores (sched_getaffinity)")
	// Only remote ranks: the launcher need not know its cores.
	_, remote, err = bindCPUs(Spec{BindTo: BindCore}, pls, make([]bool, len(pls)), nil)
	require.NoError(t, err)
	require.Equal(t, launcher.BindCore{Index: 2, Of: 3}, remote[2])
}

func TestSpecMappingValues(t *testing.T) {
	for _, c := range []struct{ mapBy, bindTo, err string }{
		{"", "", ""},
		{"node", "core", ""},
		{"socket", "", `--map-by "socket": want slot or node`},
		{"", "hwthread", `--bind-to "hwthread": want core or none`},
	} {
		s, _, _ := shSpec(1, "true")
		s.MapBy, s.BindTo = c.mapBy, c.bindTo
		_, err := s.withDefaults()
		if c.err == "" {
			require.NoError(t, err)
		} else {
			require.EqualError(t, err, c.err)
		}
	}
}

// TestRunBindToCore runs ranks bound to a core each and has each print the
// CPUs the kernel lets it run on.
func TestRunBindToCore(t *testing.T) {
	cores := affinity.Cores()
	if len(cores) < 2 {
		t.Skipf("this host lets the launcher run on %d cores; the test binds 2 ranks to one each", len(cores))
	}
	s, out, errOut := shSpec(2, `echo "$GOCOLL_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"`)
	s.BindTo = BindCore
	s.Untagged = true
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode(), errOut.String())
	want := []string{"0 " + affinity.Format(cores[0]), "1 " + affinity.Format(cores[1])}
	require.Equal(t, want, sortedLines(out.String()))

	s, out, _ = shSpec(1, `grep Cpus_allowed_list /proc/self/status | cut -f2`)
	s.Untagged = true
	res, err = Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode())
	var allCPUs []int
	for _, c := range cores {
		allCPUs = append(allCPUs, c...)
	}
	slices.Sort(allCPUs)
	require.Equal(t, affinity.Format(allCPUs), strings.TrimSpace(out.String()), "an unbound rank has every CPU")
}
