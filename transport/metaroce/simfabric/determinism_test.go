package simfabric

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scenarioLog runs a busy scenario using every random feature and returns
// its delivery log and final stats, rendered as text.
func scenarioLog(t *testing.T, seed int64) string {
	n := newTestNet(t, Config{Seed: seed})
	a, b, c := n.node(), n.node(), n.node()
	lossy := LinkConfig{Rate: 5e8, Delay: 3 * time.Microsecond, Jitter: 2 * time.Microsecond,
		Loss: 0.02, Dup: 0.01, Corrupt: 0.01, Reorder: 0.05, ReorderDelay: 7 * time.Microsecond,
		QueueBytes: 32 << 10, ECNThresholdBytes: 8 << 10}
	shared := n.link(lossy)
	p1 := n.path(a, c, n.link(lossy), shared)
	p2 := n.path(b, c, n.link(lossy), shared)
	p3, l3, err := n.Connect(c, a, lossy)
	require.NoError(t, err)
	n.schedule(Fault{At: 300 * time.Microsecond, Link: l3, Kind: Cut},
		Fault{At: 600 * time.Microsecond, Link: l3, Kind: Restore})

	for i := 0; n.Now() < ms; i++ {
		n.sendSized(p1, i, 600+i%900)
		n.sendSized(p2, i, 1500)
		if i%3 == 0 {
			n.sendSized(p3, i, 64)
		}
		n.advance(n.Now() + time.Microsecond)
	}
	n.drain()
	return formatLog(n.log) + fmt.Sprintf("%+v\n", n.Stats())
}

func TestSameSeedSameRun(t *testing.T) {
	first := scenarioLog(t, 99)
	second := scenarioLog(t, 99)
	require.Equal(t, sha256.Sum256([]byte(first)), sha256.Sum256([]byte(second)))
	require.Greater(t, len(first), 10_000, "the scenario should deliver plenty")
}

func TestDifferentSeedDifferentRun(t *testing.T) {
	require.NotEqual(t, sha256.Sum256([]byte(scenarioLog(t, 1))), sha256.Sum256([]byte(scenarioLog(t, 2))))
}

// TestLinksDrawIndependently: traffic on one link does not change the
// random choices made on another.
func TestLinksDrawIndependently(t *testing.T) {
	run := func(extra bool) []Delivery {
		n := newTestNet(t, Config{Seed: 8})
		a, b := n.node(), n.node()
		cfg := LinkConfig{Delay: time.Microsecond, Loss: 0.3, Jitter: time.Microsecond}
		p, _, err := n.Connect(a, b, cfg)
		require.NoError(t, err)
		q, _, err := n.Connect(a, b, cfg)
		require.NoError(t, err)
		for i := range 200 {
			n.sendSized(p, i, 10)
			if extra {
				n.sendSized(q, i, 10)
			}
			n.advance(n.Now() + time.Microsecond)
		}
		n.drain()
		var onP []Delivery
		for _, d := range n.log {
			if d.Path == p {
				onP = append(onP, d)
			}
		}
		return onP
	}
	require.Equal(t, formatLog(run(false)), formatLog(run(true)))
}
