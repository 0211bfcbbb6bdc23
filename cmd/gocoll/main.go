// Command gocoll starts gocoll jobs (run), measures them (bench), and
// builds emulated networks for tests (lab); gocoll --help lists the
// commands, gocoll run --help every flag of the launcher.
//
//	gocoll run -np N [--hostfile F | --hosts h1:4,h2:4] [--oversubscribe] [--rsh CMD]
//	           [--timeout SECONDS] [-x VAR[=value]]... [--tag-output=false]
//	           [--output-dir DIR] [--store auto|launcher|rank0]
//	           [--grace SECONDS] [--kill-after SECONDS] -- PROG ARGS...
//
// It starts N ranks of PROG, which joins the job with gocoll.Init: on this
// host by fork and exec, on remote hosts through ssh or the --rsh command
// ({host} marks where the host name goes; --rsh 'ip netns exec {host}'
// starts ranks in network namespaces). Ranks are numbered site by site,
// then host by host, in the order of the host list. A hostfile has lines
// "host slots=N [site=NAME] [addr=IP]"; see package launcher/hosts.
//
// Every line of text is prefixed "[rank N] " (not lines that are JSON
// objects, nor any with --tag-output=false), or with --output-dir each
// rank writes to DIR/rank.N.stdout and DIR/rank.N.stderr. SIGINT, SIGTERM,
// SIGHUP and SIGUSR2 are forwarded to every rank; SIGUSR1 prints the job's
// hang report (as --timeout, --diagnose and a rank's stall do). When a rank
// exits non-zero or is killed, the others have --grace to end on their own,
// then get SIGTERM and, --kill-after later, SIGKILL; gocoll prints which
// rank failed, on which host, how, and its last lines of output, and exits
// with that rank's status (128+signal if a signal killed it, 124 after
// --timeout). Bad input is reported in one line, with exit status 2.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/gocoll/gocoll/bench"
	"github.com/gocoll/gocoll/launcher"
)

// exitUsage is the exit status for bad input.
const exitUsage = 2

const usage = `gocoll: collective communication for Go (github.com/gocoll/gocoll): start jobs, measure them.

usage: gocoll COMMAND [ARGS...]

commands:
  run      start N ranks of a program, here and on other hosts (as mpirun, srun, torchrun)
  bench    time collectives in the nccl-tests format (bench p2p: one connection's goodput)
  lab      emulated multi-site networks in network namespaces, for tests (root)
  sim      run the real collectives in virtual time on a simulated fabric of any size
  topo     the cost model's prediction per algorithm for a topology (--explain SIZE)
  version  print gocoll's version (also gocoll --version)
  help     print this help (also gocoll --help); gocoll COMMAND --help for each command

examples:
  gocoll run -np 4 -- ./train -epochs 20
  gocoll run --hostfile hosts.txt -- /shared/bin/train
  gocoll bench allreduce -b 8 -e 128M -f 2
  gocoll run -np 2 -- gocoll bench allreduce --json | jq .
`

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "run" {
		// gocoll run forwards these to every rank (launcher/job).
		sigs := make(chan os.Signal, 4)
		signal.Notify(sigs, runSignals...)
		os.Exit(run(context.Background(), args, launcher.Environ(), os.Stdout, os.Stderr, sigs))
	}
	ctx, stop := stopContext()
	defer stop()
	os.Exit(run(ctx, args, launcher.Environ(), os.Stdout, os.Stderr, nil))
}

// stopContext returns a context that SIGINT, SIGTERM or SIGHUP cancels, for
// every command but run: the command then stops what it does and returns.
// After the first signal the default handling is restored, so that a
// second Ctrl-C kills the process at once.
func stopContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// run is the command; it returns the exit status. ctx stops bench and lab;
// sigs, the signals gocoll run forwards to its ranks.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer, sigs <-chan os.Signal) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, version())
		return 0
	case "bench":
		return bench.Main(ctx, args[1:], stdout, stderr) // package bench: nccl-tests for gocoll
	case "lab":
		return labMain(ctx, args[1:], stdout, stderr) // lab.go: emulated networks (package lab)
	case "sim":
		return simMain(ctx, args[1:], stdout, stderr) // sim.go: collectives in virtual time
	case "topo":
		return topoMain(ctx, args[1:], environ, stdout, stderr) // topo.go: the cost model's view
	case "run":
		return runMain(args[1:], environ, stdout, stderr, sigs) // run.go: the launcher
	}
	fmt.Fprintf(stderr, "gocoll: unknown command %s (want run, bench, lab, sim, topo, version or help; see gocoll --help)\n", strconv.Quote(args[0]))
	return exitUsage
}

// version is gocoll's version line: the module version and VCS revision
// the binary was built from, and the Go toolchain.
func version() string {
	v, rev, dirty := "(unknown)", "", false
	if info, ok := debug.ReadBuildInfo(); ok {
		v = info.Main.Version
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	line := "gocoll " + v
	if rev != "" {
		line += " (" + rev[:min(12, len(rev))]
		if dirty {
			line += ", modified"
		}
		line += ")"
	}
	return line + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}
