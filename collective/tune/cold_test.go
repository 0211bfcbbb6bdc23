package tune

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/topology"
)

// coldLab returns the two-site lab's probed file (testdata) with each
// level's cold latency its latency plus the given excess (0: none given).
func coldLab(t *testing.T, host, site time.Duration) topology.Topology {
	data, err := os.ReadFile("testdata/lab4m-hierarchical.topo.json")
	require.NoError(t, err)
	topo, err := topology.Parse(data)
	require.NoError(t, err)
	for _, l := range []struct {
		link   **topology.Link
		excess time.Duration
	}{{&topo.Links.Host, host}, {&topo.Links.Site, site}} {
		k := **l.link
		if l.excess > 0 {
			k.LatencyCold = k.Latency + l.excess
		}
		*l.link = &k
	}
	return topo
}

// predictions returns each algorithm's predicted time for an AllReduce
// of bytes on topo.
func predictions(t *testing.T, topo topology.Topology, bytes int) map[string]time.Duration {
	ps, err := Predict(AllReduce, Input{Topology: topo, Bytes: bytes, ChunkBytes: 2 << 20, Links: DefaultLinks()})
	require.NoError(t, err)
	out := map[string]time.Duration{}
	for _, p := range ps {
		out[p.Algorithm] = p.Time
	}
	return out
}

// The cold latency prices the hierarchical AllReduce's hops after its top
// level (one piece, the WAN's 2 ms latency past ColdWait) and nothing
// else: at 8 B its host and site all-gathers (one step each) take their
// levels' cold excess more, at most; every other algorithm, and every
// size whose hops hide behind the links, is priced as without the figure;
// a cold latency equal to the latency changes nothing, and WithoutCPU
// takes it out.
func TestColdHopsAfterTheTop(t *testing.T) {
	hostEx, siteEx := 100*time.Microsecond, 200*time.Microsecond
	for _, bytes := range []int{8, 64 << 10, 4 << 20, 256 << 20} {
		hot := predictions(t, coldLab(t, 0, 0), bytes)
		cold := predictions(t, coldLab(t, hostEx, siteEx), bytes)
		same := coldLab(t, 0, 0)
		same.Links.Host.LatencyCold, same.Links.Site.LatencyCold = same.Links.Host.Latency, same.Links.Site.Latency
		require.Equal(t, hot, predictions(t, same, bytes), "%d B: a cold latency equal to the latency", bytes)
		require.Equal(t, predictions(t, WithoutCPU(coldLab(t, 0, 0)), bytes), predictions(t, WithoutCPU(coldLab(t, hostEx, siteEx)), bytes),
			"%d B: WithoutCPU keeps the cold latency", bytes)
		for algo, d := range hot {
			if algo == "hierarchical" {
				continue
			}
			require.Equal(t, d, cold[algo], "%d B: %s moved", bytes, algo)
		}
		rise := cold["hierarchical"] - hot["hierarchical"]
		require.GreaterOrEqual(t, rise, time.Duration(0), "%d B", bytes)
		require.LessOrEqual(t, rise, hostEx+siteEx, "%d B", bytes)
		if bytes == 8 {
			require.Greater(t, rise, (hostEx+siteEx)/2, "8 B: the all-gathers' hops are cold")
		}
		t.Logf("%d B: hierarchical %v -> %v", bytes, hot["hierarchical"], cold["hierarchical"])
	}
}

// A negative cold latency is refused, naming the field.
func TestColdLatencyRefused(t *testing.T) {
	topo := coldLab(t, 0, 0)
	topo.Links = nil // the Input's figures, not the file's
	links := DefaultLinks()
	links.Site.LatencyCold = -time.Microsecond
	_, err := Predict(AllReduce, Input{Topology: topo, Bytes: 8, ChunkBytes: 2 << 20, Links: links})
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "Links.Site.LatencyCold -1µs is not in")
}
