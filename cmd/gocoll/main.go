// Command gocoll starts gocoll jobs.
//
//	gocoll run -np N [--hostfile F | --hosts h1:4,h2:4] [--rsh CMD] [--timeout D]
//	           [-x VAR[=value]]... [--output-dir DIR] [--store auto|launcher|rank0]
//	           [--grace D] [--kill-after D] -- PROG ARGS...
//
// It starts N ranks of PROG, which joins the job with gocoll.Init: on this
// host by fork and exec, on remote hosts through ssh or the --rsh command
// ({host} marks where the host name goes; --rsh 'ip netns exec {host}'
// starts ranks in network namespaces). Ranks are numbered site by site,
// then host by host, in the order of the host list. A hostfile has lines
// "host slots=N [site=NAME] [addr=IP]"; see package launcher/hosts.
//
// Every line of output is prefixed "[rank N] ", or with --output-dir each
// rank writes to DIR/rank.N.stdout and DIR/rank.N.stderr. SIGINT, SIGTERM,
// SIGHUP, SIGUSR1 and SIGUSR2 are forwarded to every rank. When a rank
// exits non-zero or is killed, the others have --grace to end on their own,
// then get SIGTERM and, --kill-after later, SIGKILL; gocoll prints which
// rank failed, on which host, how, and its last lines of output, and exits
// with that rank's status (128+signal if a signal killed it, 124 after
// --timeout). Bad input is reported in one line, with exit status 2.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/gocoll/gocoll/bench"
	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/hosts"
	"github.com/gocoll/gocoll/launcher/job"
	"github.com/gocoll/gocoll/topology"
)

// exitUsage is the exit status for bad input.
const exitUsage = 2

const usage = `usage: gocoll run -np N [--hostfile F | --hosts h1:4,h2:4] [--rsh CMD] [--timeout D]
                  [-x VAR[=value]]... [--output-dir DIR] [--store auto|launcher|rank0]
                  [--grace D] [--kill-after D] -- PROG ARGS...
`

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "run" {
		// gocoll run forwards these to every rank (launcher/job).
		sigs := make(chan os.Signal, 4)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
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
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return exitUsage
		}
		return 0
	}
	if args[0] == "bench" {
		return bench.Main(ctx, args[1:], stdout, stderr) // package bench: nccl-tests for gocoll
	}
	if args[0] == "lab" {
		return labMain(ctx, args[1:], stdout, stderr) // lab.go: emulated networks (package lab)
	}
	if args[0] != "run" {
		fmt.Fprintf(stderr, "gocoll: unknown command %q (want run, bench or lab)\n", args[0])
		return exitUsage
	}
	spec, err := parseRun(args[1:], environ)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "gocoll run: %v\n", err)
		return exitUsage
	}
	spec.Stdout, spec.Stderr, spec.Signals = stdout, stderr, sigs
	res, err := job.Run(context.Background(), spec)
	if err != nil {
		fmt.Fprintf(stderr, "gocoll run: %v\n", err)
		return exitUsage
	}
	res.Report(stderr)
	return res.ExitCode()
}

// repeated collects a repeatable flag's values.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// parseRun turns gocoll run's arguments into a job spec.
func parseRun(args, environ []string) (job.Spec, error) {
	fs := flag.NewFlagSet("gocoll run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	np := fs.Int("np", -1, "number of ranks (default: every slot of the hosts)")
	hostfile := fs.String("hostfile", "", "file of `host slots=N [site=NAME] [addr=IP]` lines")
	hostList := fs.String("hosts", "", "host:slots,host:slots")
	rsh := fs.String("rsh", job.DefaultRsh, "command that runs a command on {host}")
	timeout := fs.Duration("timeout", 0, "stop the job after this long")
	outDir := fs.String("output-dir", "", "write rank N's output to DIR/rank.N.stdout and .stderr")
	tagOutput := fs.Bool("tag-output", true, "prefix each line of text with [rank N] (JSON lines never are)")
	noPrefix := fs.Bool("no-prefix", false, "same as --tag-output=false")
	storeMode := fs.String("store", job.StoreAuto, "where the rendezvous store lives: auto, launcher or rank0")
	grace := fs.Duration("grace", job.DefaultGrace, "after a rank fails, how long the others may end on their own")
	killAfter := fs.Duration("kill-after", job.DefaultKillAfter, "how long after SIGTERM to send SIGKILL")
	var exports repeated
	fs.Var(&exports, "x", "pass VAR (or VAR=value) to every rank; repeatable")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return job.Spec{}, err
		}
		return job.Spec{}, errors.New(strings.TrimPrefix(err.Error(), "flag provided but not defined: ") + oneLineHint(err))
	}
	if fs.NArg() == 0 {
		return job.Spec{}, errors.New("no program to run (gocoll run [flags] -- PROG ARGS)")
	}
	spec := job.Spec{
		Program: fs.Arg(0), Args: fs.Args()[1:], Rsh: *rsh, Timeout: *timeout, OutputDir: *outDir,
		Store: *storeMode, Grace: *grace, KillAfter: *killAfter, Export: exports, Environ: environ,
		LocalNames: localNames(), Untagged: !*tagOutput || *noPrefix,
	}
	switch {
	case *np == 0 || *np < -1:
		return spec, fmt.Errorf("-np %d: want at least 1 rank", *np)
	case *np > 0:
		spec.NP = *np
	case *hostfile == "" && *hostList == "":
		return spec, errors.New("-np is required without --hostfile or --hosts")
	}
	if *timeout < 0 || *grace < 0 || *killAfter < 0 {
		return spec, errors.New("--timeout, --grace and --kill-after must not be negative")
	}
	var err error
	spec.Hosts, err = readHosts(*hostfile, *hostList)
	return spec, err
}

func oneLineHint(err error) string {
	if strings.Contains(err.Error(), "not defined") {
		return " (see gocoll help)"
	}
	return ""
}

// readHosts reads the host list from --hostfile or --hosts (not both).
func readHosts(hostfile, hostList string) ([]topology.HostSlots, error) {
	switch {
	case hostfile != "" && hostList != "":
		return nil, errors.New("give --hostfile or --hosts, not both")
	case hostfile != "":
		f, err := os.Open(hostfile)
		if err != nil {
			return nil, fmt.Errorf("--hostfile: %v", err)
		}
		defer f.Close()
		return hosts.ParseHostfile(hostfile, f)
	case hostList != "":
		list, err := hosts.ParseHostList(hostList)
		if err != nil {
			return nil, fmt.Errorf("--hosts: %v", err)
		}
		return list, nil
	}
	return nil, nil
}

// localNames are the names that mean this host: its hostname, and the
// hostname's first label.
func localNames() []string {
	name, err := os.Hostname()
	if err != nil || name == "" {
		return nil
	}
	names := []string{name}
	if short, _, found := strings.Cut(name, "."); found && short != "" {
		names = append(names, short)
	}
	return names
}
