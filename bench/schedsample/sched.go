package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// parseSchedstat reads a /proc/PID/task/TID/schedstat line: ns run on a
// CPU, ns waited on a run queue, and time slices (ignored).
func parseSchedstat(b []byte) (run, wait int64, err error) {
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0, fmt.Errorf("schedstat %q: want at least 2 fields", b)
	}
	if run, err = strconv.ParseInt(f[0], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("schedstat %q: run: %w", b, err)
	}
	if wait, err = strconv.ParseInt(f[1], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("schedstat %q: wait: %w", b, err)
	}
	if run < 0 || wait < 0 {
		return 0, 0, fmt.Errorf("schedstat %q: negative", b)
	}
	return run, wait, nil
}

// threadStat is one thread's counters at a sample.
type threadStat struct {
	tid       string
	run, wait int64
}

// deltas turns cumulative per-thread counters into the group's increase
// since the previous sample: a thread first seen adds nothing (its
// counters cover its life before the sample), one gone adds nothing more,
// and a counter that went back (a TID reused) restarts from there.
type deltas struct{ last map[string][2]int64 }

func newDeltas() *deltas { return &deltas{last: map[string][2]int64{}} }

// add takes a sample and returns the group's run and wait ns since the
// previous one and how many threads the sample has.
func (d *deltas) add(sample []threadStat) (run, wait int64, threads int) {
	next := make(map[string][2]int64, len(sample))
	for _, s := range sample {
		if p, ok := d.last[s.tid]; ok && s.run >= p[0] && s.wait >= p[1] {
			run += s.run - p[0]
			wait += s.wait - p[1]
		}
		next[s.tid] = [2]int64{s.run, s.wait}
	}
	d.last = next
	return run, wait, len(sample)
}

// procFS reads /proc.
type procFS struct{}

// find returns, per group, the pids that match the group (matches), this
// process excluded.
func (procFS) find(groups []group) [][]string {
	out := make([][]string, len(groups))
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	self := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		pid := e.Name()
		if pid == self || pid[0] < '0' || pid[0] > '9' {
			continue
		}
		c, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err != nil || len(c) == 0 {
			continue
		}
		var env []byte // read once, for the first group that asks
		for i, g := range groups {
			if _, ok := g.envEntry(); ok && env == nil {
				if env, err = os.ReadFile(filepath.Join("/proc", pid, "environ")); err != nil {
					env = []byte{}
				}
			}
			if g.matches(c, env) {
				out[i] = append(out[i], pid)
				break
			}
		}
	}
	return out
}

// envPrefix starts a group's text that names an environment entry
// (env:NAME=VALUE) instead of text of the command line: the processes
// started with it, which their children inherit, told apart from other
// jobs' running the same command.
const envPrefix = "env:"

// envEntry returns the NAME=VALUE of an env: group.
func (g group) envEntry() ([]byte, bool) {
	e, ok := strings.CutPrefix(g.text, envPrefix)
	return []byte(e), ok
}

// matches reports whether a process with this command line and
// environment (both as /proc gives them: NUL-separated) belongs to g: its
// environment holds g's entry (env:NAME=VALUE), or else its command line,
// NULs read as blanks, contains g's text.
func (g group) matches(cmdline, environ []byte) bool {
	if e, ok := g.envEntry(); ok {
		return slices.ContainsFunc(bytes.Split(environ, []byte{0}), func(kv []byte) bool { return bytes.Equal(kv, e) })
	}
	return bytes.Contains(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), []byte(g.text))
}

// threads reads every thread's counters of pids (threads that end while
// read are left out).
func (procFS) threads(pids []string) []threadStat {
	var out []threadStat
	for _, pid := range pids {
		tasks, err := os.ReadDir(filepath.Join("/proc", pid, "task"))
		if err != nil {
			continue
		}
		for _, t := range tasks {
			b, err := os.ReadFile(filepath.Join("/proc", pid, "task", t.Name(), "schedstat"))
			if err != nil {
				continue
			}
			run, wait, err := parseSchedstat(b)
			if err != nil {
				continue
			}
			out = append(out, threadStat{pid + "/" + t.Name(), run, wait})
		}
	}
	return out
}
