package mrtransport

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// lossyLink loses, duplicates, corrupts and reorders datagrams.
var lossyLink = simfabric.LinkConfig{Loss: 0.02, Dup: 0.01, Corrupt: 0.005, Reorder: 0.02}

// newSimTestWorld builds a world over a simulated fabric and closes it
// when t ends.
func newSimTestWorld(t testing.TB, size int, cfg Config, sim SimConfig) ([]*Endpoint, *SimNet) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eps, net, err := NewSimWorld(ctx, size, cfg, sim)
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, ep := range eps {
			require.NoError(t, ep.Close())
		}
		net.Close()
	})
	return eps, net
}

// TestSimCollectiveTable runs part of the collective table over the
// simulated fabric in real time, with every link lossy and reordering.
func TestSimCollectiveTable(t *testing.T) {
	var nets []*SimNet
	newWorld := func(t testing.TB, n int) []transport.Endpoint {
		eps, net := newSimTestWorld(t, n, Config{Paths: 4}, SimConfig{Fabric: simfabric.Config{Seed: int64(n)}, Link: lossyLink})
		nets = append(nets, net)
		return asTransport(eps)
	}
	collectivetest.Run(t, newWorld, collectivetest.Options{
		Sizes:  []int{2, 3, 5},
		Counts: []int{0, 7, 1023, 65539},
		DTypes: []dtype.DataType{dtype.Float32, dtype.Uint8},
		Ops:    []reduce.Op{reduce.Sum, reduce.Min},
	})
	var lost int64
	for _, n := range nets {
		for _, l := range n.Stats().Links {
			lost += l.DroppedLoss.Packets
		}
	}
	require.Positive(t, lost, "the fabric lost datagrams")
}
