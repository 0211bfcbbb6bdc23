package collective_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/topology"
)

func TestTopologyThroughSplit(t *testing.T) {
	const n = 6
	placements, err := topology.AssignRanks([]topology.HostSlots{
		{Host: "a1", Site: "east", Slots: 2}, {Host: "b1", Site: "west", Slots: 2}, {Host: "a2", Site: "east", Slots: 2},
	})
	require.NoError(t, err)
	topo, err := topology.FromPlacements(placements)
	require.NoError(t, err)
	comms := newComms(t, n, collective.Config{Topology: &topo})
	errs := onAll(t, comms, 10*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		got, ok := c.Topology()
		if !ok || got.Size() != n {
			return fmt.Errorf("world topology missing or wrong size")
		}
		ri, _ := topo.Rank(r)
		if c.Site() != ri.SiteName() {
			return fmt.Errorf("site %q, want %q", c.Site(), ri.SiteName())
		}
		// One communicator per site.
		color := 0
		if c.Site() == "west" {
			color = 1
		}
		sub, err := c.Split(ctx, color, 0)
		if err != nil {
			return err
		}
		st, ok := sub.Topology()
		if !ok || st.Size() != sub.Size() || len(st.Sites()) != 1 || st.Sites()[0] != c.Site() {
			return fmt.Errorf("split topology %+v", st)
		}
		return st.Validate()
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	_, err = collective.New(inprocWorld(t, 2)[0], 1, collective.Config{Topology: &topo})
	require.ErrorContains(t, err, "Topology has 6 ranks")
}
