// Command schedsample is the sampler bench/wan_trace.sh starts beside a lab
// job (with SCHED=1) to show where a call's CPU goes over time: every
// -every it reads the scheduler's counters of every thread of the processes
// whose command line contains a group's text (Linux's
// /proc/PID/task/TID/schedstat: ns run on a CPU, ns waited runnable on a
// run queue) and prints, per group, one line
//
//	UNIX_NS GROUP RUN_NS WAIT_NS THREADS
//
// with the ns run and waited by the group's threads since the previous
// sample (a thread first seen counts from its first sample) and how many
// threads it has. RUN_NS over the interval is the cores the group kept
// busy; WAIT_NS over it is how many of its threads waited for a core on
// average. A group's text env:NAME=VALUE takes the processes whose
// environment holds that entry instead (a variable the script that starts
// a job sets, which its ranks inherit: one job's ranks told apart from
// another's running the same command, as bench/stall_lab.sh does).
// Processes are looked for again every 50 samples. It stops at SIGINT or
// SIGTERM, or after -for.
//
// Usage: schedsample -group job='bench allreduce' -group daemons='lab delayd' [-every 5ms] [-for 10m]
//
//	schedsample -group job=env:STALL_LAB_TAG=x -every 100ms -for 2h
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// groupFlags collects -group NAME=TEXT flags.
type groupFlags []group

type group struct{ name, text string }

func (g *groupFlags) String() string { return fmt.Sprint(*g) }

func (g *groupFlags) Set(s string) error {
	name, text, ok := strings.Cut(s, "=")
	if !ok || name == "" || text == "" || strings.ContainsAny(name, " \t") {
		return fmt.Errorf("want NAME=TEXT (a name without blanks), got %q", s)
	}
	*g = append(*g, group{name, text})
	return nil
}

func main() {
	var groups groupFlags
	flag.Var(&groups, "group", "NAME=TEXT: the processes whose command line contains TEXT (or, for TEXT env:VAR=VALUE, whose environment holds VAR=VALUE), reported as NAME (repeatable)")
	every := flag.Duration("every", 5*time.Millisecond, "sampling interval")
	limit := flag.Duration("for", 10*time.Minute, "stop after this long")
	flag.Parse()
	if len(groups) == 0 || *every <= 0 || *limit <= 0 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "schedsample: want at least one -group NAME=TEXT, a positive -every and -for, and no arguments")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *limit)
	defer cancel()
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	if err := run(ctx, w, groups, *every, procFS{}); err != nil {
		fmt.Fprintln(os.Stderr, "schedsample:", err)
		os.Exit(1)
	}
}

// run samples until ctx ends.
func run(ctx context.Context, w *bufio.Writer, groups []group, every time.Duration, fs procFS) error {
	acc := make([]*deltas, len(groups))
	for i := range acc {
		acc[i] = newDeltas()
	}
	pids := make([][]string, len(groups))
	t := time.NewTicker(every)
	defer t.Stop()
	for n := 0; ; n++ {
		if n%50 == 0 {
			pids = fs.find(groups)
		}
		now := time.Now()
		for i, g := range groups {
			run, wait, threads := acc[i].add(fs.threads(pids[i]))
			if n > 0 {
				fmt.Fprintf(w, "%d %s %d %d %d\n", now.UnixNano(), g.name, run, wait, threads)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
