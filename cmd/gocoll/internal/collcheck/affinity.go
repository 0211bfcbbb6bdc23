package main

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/gocoll/gocoll"
	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/internal/affinity"
)

// printAffinity prints the CPUs every thread of this process may run on
// (one list if all agree), then joins one AllReduce so that every rank
// has printed before any ends.
func printAffinity(ctx context.Context, w *gocoll.World) error {
	threads, err := affinity.Threads()
	if err != nil {
		return err
	}
	lists := map[string]bool{}
	for _, cpus := range threads {
		lists[affinity.Format(cpus)] = true
	}
	if len(lists) == 1 {
		fmt.Printf("rank %d on %s: cpus %s\n", w.Rank(), w.Host(), slices.Collect(maps.Keys(lists))[0])
	} else {
		fmt.Printf("rank %d on %s: threads differ: %v\n", w.Rank(), w.Host(), threads)
	}
	x := []float32{1}
	return collective.AllReduce(ctx, w.Comm, x, x, collective.Sum)
}
