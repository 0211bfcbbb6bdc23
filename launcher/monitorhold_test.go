package launcher

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/internal/affinity"
	"github.com/gocoll/gocoll/topology"
)

func TestHoldsMonitor(t *testing.T) {
	for _, tc := range []struct {
		local, cpus int
		want        bool
	}{
		{4, 2, true}, {3, 2, true}, {2, 2, false}, {1, 2, false}, {1, 1, false}, {2, 1, true}, {2, 0, true}, {8, 16, false},
	} {
		require.Equal(t, tc.want, holdsMonitor(tc.local, tc.cpus), "%+v", tc)
	}
}

// holdMonitor never parks: sampled from another P, its goroutine is
// always running or runnable (its naps are raw system calls, unseen by
// the runtime), never asleep, in a system call or waiting on a channel,
// which would leave its P idle or to be taken (the monitor's restart).
func TestHoldMonitorKeepsItsP(t *testing.T) {
	if !rawNapWorks {
		t.Skip("no raw nap on " + runtime.GOOS)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	done := make(chan time.Duration)
	go func() { done <- holdMonitor(context.Background(), 60*time.Millisecond) }()
	buf := make([]byte, 1<<20)
	seen := 0
	for {
		select {
		case held := <-done:
			require.GreaterOrEqual(t, held, 60*time.Millisecond)
			require.Positive(t, seen, "holdMonitor's goroutine never sampled")
			return
		default:
		}
		dump := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(dump, "\n\n") {
			if !strings.Contains(g, "launcher.holdMonitor(") {
				continue
			}
			seen++
			state := g[strings.Index(g, "[")+1 : strings.Index(g, "]")]
			require.Contains(t, []string{"running", "runnable"}, state, "holdMonitor's goroutine:\n%s", g)
		}
	}
}

// A hold whose ctx has ended returns without napping.
func TestHoldMonitorEndsWithCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.Less(t, holdMonitor(ctx, time.Hour), time.Hour)
}

// A hold whose ctx ends while it holds returns then (within a nap), not
// at the end of its hour: the ctx is checked between naps, not only before
// the first. The cancel comes 5 ms into the hold (had the goroutine not
// started by then, the test would only check less, never fail wrongly);
// the minute's wait only bounds the test.
func TestHoldMonitorEndsWithCtxWhileHeld(t *testing.T) {
	if !rawNapWorks {
		t.Skip("no raw nap on " + runtime.GOOS)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan time.Duration, 1)
	go func() { done <- holdMonitor(ctx, time.Hour) }()
	time.Sleep(5 * time.Millisecond)
	cancel()
	select {
	case held := <-done:
		require.Less(t, held, time.Hour)
	case <-time.After(time.Minute):
		t.Fatal("holdMonitor still holding a minute after its ctx ended")
	}
}

// settleMonitor holds where the rank's host has more ranks than this
// process's processors (processorsNow: its mask, capped by a cgroup
// quota), and only there.
func TestSettleMonitorWhere(t *testing.T) {
	if !rawNapWorks {
		t.Skip("no raw nap on " + runtime.GOOS)
	}
	cpus := processorsNow()
	for _, tc := range []struct {
		topo topology.Topology
		rank int
		held bool
	}{
		{hostsOf(cpus + 1), 0, true},
		{hostsOf(cpus), 0, false},
		{hostsOf(1, cpus+1), 0, false},
		{hostsOf(1, cpus+1), 1, true},
	} {
		var out bytes.Buffer
		log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
		settleMonitor(context.Background(), tc.topo, tc.rank, log)
		require.Equal(t, tc.held, strings.Contains(out.String(), "held the processor"), "%d ranks, rank %d: %s", len(tc.topo.Ranks), tc.rank, out.String())
	}
}

// settleMonitor counts the processors the process may run on as Join
// ends, not as it started (runtime.NumCPU): a rank that Join bound to one
// core (GOCOLL_BIND_CORE) shares that core with its monitor thread, and
// holds where its host has another rank, as a rank started bound does.
func TestSettleMonitorAfterBind(t *testing.T) {
	if !rawNapWorks {
		t.Skip("no raw nap on " + runtime.GOOS)
	}
	var all []int
	for _, core := range affinity.Cores() {
		all = append(all, core...)
	}
	if len(all) < 2 {
		t.Skip("fewer than 2 CPUs to bind among")
	}
	require.NoError(t, affinity.Bind(all[:1]))
	t.Cleanup(func() { require.NoError(t, affinity.Bind(all)) })
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	settleMonitor(context.Background(), hostsOf(2), 0, log)
	require.Contains(t, out.String(), "held the processor", "bound to CPU %d of %v", all[0], all)
}
