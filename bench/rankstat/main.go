// Command rankstat tells a lab's slow calls that were starved of CPU
// from those that waited on something else. Every -every it reads, for
// each process whose environment holds -env (NAME=VALUE, set by the
// script that starts the job, which its ranks inherit) and GOCOLL_RANK,
// the CPU time and the run-queue wait of all its threads
// (/proc/PID/task/TID/schedstat: time on a CPU, time runnable but
// waiting for one), and prints what each rank used in the interval:
//
//	UNIXMS RANK CPUMS WAITMS
//
// A call whose ranks got little CPU per second of its wall time while
// their threads waited in the run queue was starved (a loaded machine);
// one whose ranks neither ran nor waited to run was idle, waiting on the
// network or a timer (bench/stall_lab.sh sums these per call). Unlike
// bench/schedsample (wan_trace.sh's, which groups processes by their
// command line), it tells one job's ranks from another's running the same
// command, and gives each rank its own line. Linux only (/proc); it stops
// when killed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	env := flag.String("env", "", "NAME=VALUE the job's processes hold in their environment (required)")
	every := flag.Duration("every", 100*time.Millisecond, "sampling interval")
	flag.Parse()
	if !strings.Contains(*env, "=") || *every <= 0 {
		fmt.Fprintln(os.Stderr, "rankstat: want -env NAME=VALUE and a positive -every")
		os.Exit(2)
	}
	prev := sample([]byte(*env))
	for {
		time.Sleep(*every)
		cur := sample([]byte(*env))
		ms := time.Now().UnixMilli()
		for pid, a := range cur {
			if p, ok := prev[pid]; ok {
				fmt.Printf("%d %s %d %d\n", ms, a.rank, (a.cpu-p.cpu)/1e6, (a.wait-p.wait)/1e6)
			}
		}
		prev = cur
	}
}

// usage is one process's rank and its threads' summed schedstat (ns).
type usage struct {
	rank      string
	cpu, wait int64
}

// sample returns the usage of every process whose environment holds env
// and a GOCOLL_RANK, by pid.
func sample(env []byte) map[string]usage {
	out := map[string]usage{}
	ds, _ := os.ReadDir("/proc")
	for _, d := range ds {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/environ")
		if err != nil {
			continue
		}
		rank, ok := rankOf(b, env)
		if !ok {
			continue
		}
		u := usage{rank: rank}
		ts, _ := filepath.Glob("/proc/" + d.Name() + "/task/*/schedstat")
		for _, t := range ts {
			if s, err := os.ReadFile(t); err == nil {
				cpu, wait, ok := parseSchedstat(s)
				if ok {
					u.cpu, u.wait = u.cpu+cpu, u.wait+wait
				}
			}
		}
		out[d.Name()] = u
	}
	return out
}

// rankOf returns GOCOLL_RANK from a NUL-separated environment that holds
// the entry env, or false.
func rankOf(environ, env []byte) (string, bool) {
	rank, has := "", false
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if bytes.Equal(kv, env) {
			has = true
		}
		if r, ok := bytes.CutPrefix(kv, []byte("GOCOLL_RANK=")); ok {
			rank = string(r)
		}
	}
	return rank, has && rank != ""
}

// parseSchedstat returns the first two fields of a schedstat line: time
// on a CPU and time waiting on a run queue, in ns.
func parseSchedstat(b []byte) (cpu, wait int64, ok bool) {
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0, false
	}
	cpu, err1 := strconv.ParseInt(f[0], 10, 64)
	wait, err2 := strconv.ParseInt(f[1], 10, 64)
	return cpu, wait, err1 == nil && err2 == nil
}
