// Command collcheck is the program the launcher tests start under gocoll
// run, mpirun and srun: it joins the job with gocoll.Init and checks every
// collective's result exactly.
//
//	collcheck [-mode all|first|loop|exit|hang|affinity] [-rank R] [-code C] [-count N] [-rounds K] [-deadline D]
//
// Modes:
//
//	all    every collective, each result checked; each rank prints one
//	       "ok" line, rank 0 also the topology (sites, hosts, site
//	       crossings of the rank-order ring)
//	first  one AllReduce, then exit (start-up time to first collective)
//	loop   AllReduce of -count floats until one fails (or, with -rounds
//	       N > 1, for N rounds), each sum checked; prints "looping
//	       pid=P" after the first, and the error at the end
//	exit   rank -rank exits with status -code after joining; the others
//	       wait in a Barrier
//	hang   loop, but rank -rank stops calling AllReduce after -rounds
//	       rounds: it prints "hanging pid=P after K rounds" and waits,
//	       alive, until it is stopped, never arriving at the next one
//	affinity  each rank prints "rank R on HOST: cpus C" (the CPUs every
//	       thread of its process may run on: sched_getaffinity), or
//	       "threads differ" with each thread's; then one AllReduce
//
// Errors are one line on stderr; the exit status is 1.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/gocoll/gocoll"
	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/topology"
)

func main() {
	mode := flag.String("mode", "all", "all, first, loop, exit, hang or affinity")
	exitRank := flag.Int("rank", 0, "exit mode: the rank that exits")
	exitCode := flag.Int("code", 3, "exit mode: its exit status")
	count := flag.Int("count", 1<<18, "loop and hang modes: floats per AllReduce")
	rounds := flag.Int("rounds", 1, "hang mode: rounds before rank -rank stops calling; loop mode: end after this many rounds if > 1")
	minTime := flag.Duration("min-time", 0, "loop mode with -rounds > 1: go on past -rounds until this long has passed on some rank (checked together every 64 rounds)")
	deadline := flag.Duration("deadline", 5*time.Minute, "the calls' context deadline; 0: none (GOCOLL_TIMEOUT then bounds each operation)")
	flag.Parse()
	ctx, cancel := context.WithCancel(context.Background())
	if *deadline > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), *deadline)
	}
	defer cancel()
	world, err := gocoll.Init(ctx)
	if err != nil {
		fail(err)
	}
	switch *mode {
	case "all":
		err = checkAll(ctx, world)
	case "first":
		x := []float32{1}
		err = collective.AllReduce(ctx, world.Comm, x, x, collective.Sum)
	case "loop":
		err = loop(ctx, world, *count, *rounds, -1, *minTime)
	case "hang":
		err = loop(ctx, world, *count, *rounds, *exitRank, 0)
	case "affinity":
		err = printAffinity(ctx, world)
	case "exit":
		if world.Rank() == *exitRank {
			fmt.Printf("rank %d exits with status %d\n", world.Rank(), *exitCode)
			os.Exit(*exitCode)
		}
		err = world.Barrier(ctx)
	default:
		err = fmt.Errorf("unknown -mode %q", *mode)
	}
	if err != nil {
		fail(err)
	}
	if err := world.Close(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "collcheck: %v\n", err)
	os.Exit(1)
}

// loop runs AllReduce until it fails, and returns that error. Rank
// hangRank (-1: none) stops calling it after rounds rounds and sleeps
// until ctx ends. Without a hanging rank, rounds > 1 ends the loop after
// that many, each round's sum checked (every element the sum of the
// ranks' numbers plus one), or, with minTime > 0, after the first
// multiple of 64 rounds from there at which some rank has run for
// minTime: the ranks agree on it by a Max AllReduce every 64 rounds, so
// a job lasts at least minTime whatever the machine's speed.
func loop(ctx context.Context, w *gocoll.World, count, rounds, hangRank int, minTime time.Duration) error {
	start := time.Now()
	x := make([]float32, count)
	n := w.Size()
	want := slices.Repeat([]float32{float32(n * (n + 1) / 2)}, count)
	for i := 0; ; i++ {
		if w.Rank() == hangRank && i == rounds {
			fmt.Printf("hanging pid=%d after %d rounds\n", os.Getpid(), i)
			<-ctx.Done()
			return ctx.Err()
		}
		for j := range x {
			x[j] = float32(w.Rank() + 1)
		}
		if err := collective.AllReduce(ctx, w.Comm, x, x, collective.Sum); err != nil {
			fmt.Printf("allreduce failed after %d rounds\n", i)
			return err
		}
		if err := mismatch("AllReduce", x, want); err != nil {
			return err
		}
		if i == 0 {
			fmt.Printf("looping pid=%d\n", os.Getpid())
		}
		if hangRank < 0 && rounds > 1 && i+1 >= rounds {
			done, err := loopDone(ctx, w, i+1, rounds, minTime, start)
			if err != nil {
				return err
			}
			if done {
				fmt.Printf("rank %d: %d rounds ok\n", w.Rank(), i+1)
				return nil
			}
		}
	}
}

// loopDone says whether a loop without a hanging rank ends after round
// i (counted from 1), at least rounds: at once without minTime, else at a
// multiple of 64 rounds once some rank has run for minTime (a Max
// AllReduce, so every rank ends at the same round).
func loopDone(ctx context.Context, w *gocoll.World, i, rounds int, minTime time.Duration, start time.Time) (bool, error) {
	if minTime <= 0 {
		return true, nil
	}
	if (i-rounds)%64 != 0 {
		return false, nil
	}
	past := []int32{0}
	if time.Since(start) >= minTime {
		past[0] = 1
	}
	if err := collective.AllReduce(ctx, w.Comm, past, past, collective.Max); err != nil {
		return false, fmt.Errorf("loop's end check after %d rounds: %w", i, err)
	}
	return past[0] == 1, nil
}

// checkAll runs every collective and checks each result.
func checkAll(ctx context.Context, w *gocoll.World) error {
	checks := []struct {
		name string
		run  func(context.Context, *collective.Comm) error
	}{
		{"AllReduce", checkAllReduce}, {"Broadcast", checkBroadcast}, {"Reduce", checkReduce},
		{"AllGather", checkAllGather}, {"ReduceScatter", checkReduceScatter}, {"AllToAll", checkAllToAll},
		{"AllToAllV", checkAllToAllV}, {"Gather", checkGather}, {"Scatter", checkScatter},
		{"SendRecv", checkSendRecv}, {"Barrier", func(ctx context.Context, c *collective.Comm) error { return c.Barrier(ctx) }},
	}
	for _, c := range checks {
		if err := c.run(ctx, w.Comm); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	if err := checkSiteSplit(ctx, w); err != nil {
		return fmt.Errorf("Split by site: %w", err)
	}
	fmt.Printf("rank %d/%d on %s site %s local %d: all collectives ok\n", w.Rank(), w.Size(), w.Host(), w.Site(), w.LocalRank())
	if w.Rank() == 0 {
		fmt.Printf("launched by %s, job %s, store %s\n", w.Job().Launcher, w.Job().JobID, w.Job().Store)
		return printTopology(w.Topology())
	}
	return nil
}

func printTopology(t topology.Topology) error {
	ring := make([]int, t.Size())
	for i := range ring {
		ring[i] = i
	}
	crossings, err := topology.SiteCrossings(t, ring)
	if err != nil {
		return err
	}
	best, err := topology.RingOrder(t)
	if err != nil {
		return err
	}
	fmt.Printf("topology: sites %v, hosts %v\n", t.Sites(), t.Hosts())
	fmt.Printf("rank-order ring crosses sites %d times; RingOrder is rank order: %v\n", crossings, slices.Equal(ring, best))
	return nil
}

// mismatch describes the first element where got and want differ.
func mismatch[T comparable](what string, got, want []T) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("%s: element %d is %v, want %v", what, i, got[i], want[i])
		}
	}
	return nil
}
