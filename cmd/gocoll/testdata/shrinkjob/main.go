// Command shrinkjob is the training job the --on-failure continue test
// starts under gocoll run: every rank sums integer "gradients" into its
// weights for -steps steps with AllReduce; rank -kill sends itself SIGKILL
// at the start of step -at. The survivors see the failure, Shrink the
// world (naming the rank their error names, if any), agree on the last
// step every survivor completed, roll back to it, and finish on the
// smaller communicator. Each survivor checks its weights exactly against
// the sum it recomputes alone and prints one line:
//
//	done size=3 members=0,1,3 resume=K checksum=C ok
//
// Gradients are integers, so the sums are exact whatever the order. Errors
// are one line on stderr; the exit status is 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gocoll/gocoll"
	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
)

const width = 1024 // parameters

// grad is rank r's gradient at step s.
func grad(r, s int, g []int64) {
	for i := range g {
		g[i] = int64((r+1)*(s+1) + i%7)
	}
}

func main() {
	steps := flag.Int("steps", 40, "training steps")
	kill := flag.Int("kill", 2, "the rank that kills itself (-1: none)")
	at := flag.Int("at", 15, "the step at whose start it does")
	flag.Parse()
	if err := run(*steps, *kill, *at); err != nil {
		fmt.Fprintln(os.Stderr, "shrinkjob:", err)
		os.Exit(1)
	}
}

func run(steps, kill, at int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	world, err := gocoll.Init(ctx)
	if err != nil {
		return err
	}
	defer world.Close()
	me, n := world.Rank(), world.Size()
	members := make([]int, n) // world ranks of the communicator's ranks
	for i := range members {
		members[i] = i
	}
	comm := world.Comm
	weights := make([]int64, width)
	// before[s%2] is the weights before step s, for the roll-back.
	before := [2][]int64{make([]int64, width), make([]int64, width)}
	g := make([]int64, width)
	log := []int{} // the communicator size at each completed step
	for s := 0; s < steps; {
		if me == kill && s == at {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // SIGKILL cannot be caught
		}
		copy(before[s%2], weights)
		grad(me, s, g)
		err := collective.AllReduce(ctx, comm, g, g, collective.Sum)
		if err == nil {
			for i := range weights {
				weights[i] += g[i]
			}
			log = append(log, comm.Size())
			s++
			continue
		}
		// A rank failed: shrink, agree on where to resume, roll back.
		var exclude []int
		var pe *transport.PeerError
		if errors.As(err, &pe) && pe.Rank != me {
			if i := slices.Index(members, pe.Rank); i >= 0 {
				exclude = []int{i}
			}
		}
		fmt.Fprintf(os.Stderr, "step %d failed (%v); shrinking, excluding %v\n", s, err, exclude)
		sub, err := comm.Shrink(ctx, exclude)
		if err != nil {
			return fmt.Errorf("shrink: %w", err)
		}
		// The new members, by world rank.
		mine := []int64{int64(me)}
		all := make([]int64, sub.Size())
		if err := collective.AllGather(ctx, sub, mine, all); err != nil {
			return fmt.Errorf("gathering the members: %w", err)
		}
		members = members[:0]
		for _, r := range all {
			members = append(members, int(r))
		}
		resume := []int64{int64(s)}
		if err := collective.AllReduce(ctx, sub, resume, resume, collective.Min); err != nil {
			return fmt.Errorf("agreeing on the step: %w", err)
		}
		r := int(resume[0])
		if r < s-1 || r > s {
			return fmt.Errorf("resume at step %d from step %d: more than one step apart", r, s)
		}
		if r < s {
			copy(weights, before[r%2])
			log = log[:r]
		}
		fmt.Fprintf(os.Stderr, "resuming at step %d on %d ranks %v\n", r, sub.Size(), members)
		if comm != world.Comm {
			_ = comm.Close()
		}
		comm, s = sub, r
	}
	// Recompute alone: step s summed the gradients of the ranks that were
	// members then (everyone before the resume point, the survivors after).
	want := make([]int64, width)
	for s := range steps {
		for r := range n {
			if log[s] < n && !slices.Contains(members, r) {
				continue
			}
			grad(r, s, g)
			for i := range want {
				want[i] += g[i]
			}
		}
	}
	if !slices.Equal(want, weights) {
		return fmt.Errorf("weights differ from the recomputed sum at %d", mismatch(want, weights))
	}
	var sum int64
	for _, x := range weights {
		sum += x
	}
	resumeAt := slices.Index(log, comm.Size())
	if comm.Size() == n {
		resumeAt = -1
	}
	fmt.Printf("done size=%d members=%s resume=%d checksum=%d ok\n", comm.Size(), join(members), resumeAt, sum)
	if comm != world.Comm {
		return comm.Close()
	}
	return nil
}

func mismatch(a, b []int64) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

func join(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
