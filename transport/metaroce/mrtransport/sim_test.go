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
// With -short (the race run), 2 and 5 ranks and one small and one
// many-datagram count: under -race at load ~19 the whole took 150 s
// (n=5 111 s) for 21 CPU-s, and the race run's 10 m timeout ended the
// package in it (load 15-22); TestCollectiveTable there covers counts 0
// and 1023 over loopback.
func TestSimCollectiveTable(t *testing.T) {
	var nets []*SimNet
	newWorld := func(t testing.TB, n int) []transport.Endpoint {
		eps, net := newSimTestWorld(t, n, Config{Paths: 4}, SimConfig{Fabric: simfabric.Config{Seed: int64(n)}, Link: lossyLink})
		nets = append(nets, net)
		return asTransport(eps)
	}
	opts := collectivetest.Options{
		Sizes:  []int{2, 3, 5},
		Counts: []int{0, 7, 1023, 65539},
		DTypes: []dtype.DataType{dtype.Float32, dtype.Uint8},
		Ops:    []reduce.Op{reduce.Sum, reduce.Min},
	}
	if testing.Short() {
		opts.Sizes, opts.Counts = []int{2, 5}, []int{7, 65539}
	}
	collectivetest.Run(t, newWorld, opts)
	var lost int64
	for _, n := range nets {
		for _, l := range n.Stats().Links {
			lost += l.DroppedLoss.Packets
		}
	}
	require.Positive(t, lost, "the fabric lost datagrams")
}
