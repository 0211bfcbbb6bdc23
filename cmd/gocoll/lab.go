//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/gocoll/gocoll/lab"
)

const labUsage = `usage: gocoll lab SUBCOMMAND [--name LAB] ...   (root; package lab)
  up [--paths 2] [--rate MBIT] [--delay MS] [--jitter MS] [--loss PCT] [--mtu 1500]
     [--sites 2] [--hosts-per-site 2] [--wan-delay MS] [--queue-ms 20] [--seed N] [--l3-hash]
     [--prio-dscp 48]                (-1: rate-limited queues one FIFO, no priority band)
  down                               tear the lab down (idempotent)
  exec HOST -- CMD ARGS...           run CMD in HOST's namespace (s1h1, s2r, ...)
  hostfile [--slots 1]               a hostfile for gocoll run --rsh 'ip netns exec {host}'
  cut PATH [--silent]                link down, or --silent: drop both ways, routing unaware
  restore PATH                       undo a cut
  shape PATH [--dir fwd|rev|both] [--rate MBIT] [--delay MS] [--jitter MS] [--loss PCT]
  stats                              counters per path and direction
  route SRC DST SPORT DPORT [udp|tcp] which path the source's router sends that flow over
  list                               the labs that are up
PATH is sA-sB/pI, or pI in a lab of two sites. The lab is called "lab" unless --name says.
`

// defaultLabName names the lab when --name is not given.
const defaultLabName = "lab"

// labMain is `gocoll lab`; it returns the exit status.
func labMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, labUsage)
		if len(args) == 0 {
			return exitUsage
		}
		return 0
	}
	sub, rest := args[0], args[1:]
	if sub == "delayd" { // hidden: started by lab.Up in a router's namespace
		return lab.DelaydMain(rest, stdout, stderr)
	}
	cmd, ok := labCommands[sub]
	if !ok {
		fmt.Fprintf(stderr, "gocoll lab: unknown subcommand %q (see gocoll lab help)\n", sub)
		return exitUsage
	}
	code, err := cmd(ctx, rest, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "gocoll lab %s: %v\n", sub, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// labCommand runs one subcommand; a usage error returns exitUsage.
type labCommand func(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error)

var labCommands = map[string]labCommand{
	"up": labUp, "down": labDown, "exec": labExec, "hostfile": labHostfile, "cut": labCut,
	"restore": labRestore, "shape": labShape, "stats": labStats, "route": labRoute, "list": labList,
}

func nameFlag(fs *flag.FlagSet) *string {
	return fs.String("name", defaultLabName, "the lab's name")
}

// labSpecFlags parses gocoll lab up's flags into a spec.
func labSpecFlags(args []string) (lab.Spec, error) {
	fs := flag.NewFlagSet("gocoll lab up", flag.ContinueOnError)
	var s lab.Spec
	name := nameFlag(fs)
	fs.IntVar(&s.Paths, "paths", lab.DefaultPaths, "links between each pair of sites")
	fs.Float64Var(&s.RateMbit, "rate", 0, "each path's rate, Mbit/s (0: unlimited)")
	fs.Float64Var(&s.DelayMS, "delay", 0, "each path's one-way delay, ms")
	fs.Float64Var(&s.JitterMS, "jitter", 0, "± jitter of the delay, ms")
	fs.Float64Var(&s.LossPct, "loss", 0, "random loss, percent")
	fs.IntVar(&s.MTU, "mtu", lab.DefaultMTU, "links' MTU")
	fs.IntVar(&s.Sites, "sites", lab.DefaultSites, "sites, 2 to 4")
	fs.IntVar(&s.HostsPerSite, "hosts-per-site", lab.DefaultHostsPerSite, "hosts in each site")
	fs.Float64Var(&s.WANDelayMS, "wan-delay", 0, "one-way delay between sites, ms, added to --delay")
	fs.Float64Var(&s.QueueMS, "queue-ms", lab.DefaultQueueMS, "a rate-limited path's queue, ms of its rate")
	seed := fs.Uint("seed", 0, "the routers' multipath hash seed (0: the kernel's)")
	fs.BoolVar(&s.L3Hash, "l3-hash", false, "hash flows on addresses only, not ports")
	fs.IntVar(&s.PriorityDSCP, "prio-dscp", lab.DefaultPriorityDSCP, "DSCP the rate-limited queues serve first (MetaRoCE's control class); -1: one FIFO")
	pos, err := parseLabFlags(fs, args)
	if err != nil {
		return s, err
	}
	if len(pos) > 0 {
		return s, usagef("unexpected argument %q", pos[0])
	}
	if *seed > 1<<32-1 {
		return s, usagef("--seed %d: want at most %d", *seed, uint32(1<<32-1))
	}
	s.Name, s.Seed = *name, uint32(*seed)
	for _, f := range []struct {
		name string
		v    int
	}{{"paths", s.Paths}, {"mtu", s.MTU}, {"sites", s.Sites}, {"hosts-per-site", s.HostsPerSite}} {
		if f.v <= 0 {
			return s, usagef("--%s %d: want a positive number", f.name, f.v)
		}
	}
	if s.QueueMS <= 0 {
		return s, usagef("--queue-ms %v: want a positive number", s.QueueMS)
	}
	if err := lab.CheckSpec(s); err != nil {
		return s, usageError{err}
	}
	return s, nil
}

func labUp(ctx context.Context, args []string, stdout, _ io.Writer) (int, error) {
	spec, err := labSpecFlags(args)
	if err != nil {
		return exitUsage, err
	}
	start := time.Now()
	l, err := lab.Up(ctx, spec)
	if err != nil {
		return exitCode(err), err
	}
	s := l.Spec()
	fmt.Fprintf(stdout, "lab %s up in %v: %d sites x %d hosts, %d paths per pair of sites, rate %g Mbit/s, one-way delay %g ms ± %g, loss %g%%, MTU %d\n",
		s.Name, time.Since(start).Round(time.Millisecond), s.Sites, s.HostsPerSite, s.Paths, s.RateMbit, s.DelayMS+s.WANDelayMS, s.JitterMS, s.LossPct, s.MTU)
	return 0, nil
}

// exitCode is 2 for errors of input (bad spec, not root), 1 otherwise.
func exitCode(err error) int {
	if errors.Is(err, lab.ErrNotRoot) || errors.Is(err, lab.ErrNoLab) || errors.Is(err, lab.ErrUnavailable) {
		return exitUsage
	}
	return 1
}

// openLab parses a subcommand's flags (fs plus --name) and opens its lab.
func openLab(fs *flag.FlagSet, args []string) (*lab.Lab, []string, error) {
	name := nameFlag(fs)
	pos, err := parseLabFlags(fs, args)
	if err != nil {
		return nil, nil, err
	}
	if err := lab.CheckName(*name); err != nil {
		return nil, nil, usageError{err}
	}
	l, err := lab.Open(*name)
	if err != nil {
		return nil, nil, err
	}
	return l, pos, nil
}

func labErr(err error) (int, error) {
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage, err
	}
	return exitCode(err), err
}

func labDown(ctx context.Context, args []string, stdout, _ io.Writer) (int, error) {
	fs := flag.NewFlagSet("gocoll lab down", flag.ContinueOnError)
	name := nameFlag(fs)
	pos, err := parseLabFlags(fs, args)
	if err != nil {
		return exitUsage, err
	}
	if len(pos) > 0 {
		return exitUsage, usagef("unexpected argument %q", pos[0])
	}
	start := time.Now()
	if err := lab.DownName(ctx, *name); err != nil {
		return labErr(err)
	}
	fmt.Fprintf(stdout, "lab %s down in %v\n", *name, time.Since(start).Round(time.Millisecond))
	return 0, nil
}

func labExec(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	before, cmdArgs, found := cutDashes(args)
	if !found || len(cmdArgs) == 0 {
		return exitUsage, usagef("usage: gocoll lab exec [--name LAB] HOST -- CMD ARGS...")
	}
	l, pos, err := openLab(flag.NewFlagSet("gocoll lab exec", flag.ContinueOnError), before)
	if err != nil {
		return labErr(err)
	}
	if len(pos) != 1 {
		return exitUsage, usagef("want one HOST before --")
	}
	cmd, err := l.Command(ctx, pos[0], cmdArgs...)
	if err != nil {
		return exitUsage, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		return ee.ExitCode(), nil
	}
	return labErr(err)
}

func labHostfile(_ context.Context, args []string, stdout, _ io.Writer) (int, error) {
	fs := flag.NewFlagSet("gocoll lab hostfile", flag.ContinueOnError)
	slots := fs.Int("slots", 1, "slots of each host")
	l, pos, err := openLab(fs, args)
	if err != nil {
		return labErr(err)
	}
	if len(pos) > 0 || *slots < 1 {
		return exitUsage, usagef("usage: gocoll lab hostfile [--name LAB] [--slots N>0]")
	}
	fmt.Fprint(stdout, l.Hostfile(*slots))
	return 0, nil
}

// openPath opens the lab and parses its one PATH argument.
func openPath(fs *flag.FlagSet, args []string, usage string) (*lab.Lab, lab.Path, error) {
	l, pos, err := openLab(fs, args)
	if err != nil {
		return nil, lab.Path{}, err
	}
	if len(pos) != 1 {
		return nil, lab.Path{}, usagef("usage: %s", usage)
	}
	p, err := l.ParsePath(pos[0])
	if err != nil {
		return nil, lab.Path{}, usageError{err}
	}
	return l, p, nil
}

func labCut(ctx context.Context, args []string, stdout, _ io.Writer) (int, error) {
	fs := flag.NewFlagSet("gocoll lab cut", flag.ContinueOnError)
	silent := fs.Bool("silent", false, "drop every packet both ways, the routers unaware")
	l, p, err := openPath(fs, args, "gocoll lab cut [--name LAB] PATH [--silent]")
	if err != nil {
		return labErr(err)
	}
	if err := l.Cut(ctx, p, *silent); err != nil {
		return labErr(err)
	}
	fmt.Fprintf(stdout, "lab %s: path %s cut%s\n", l.Name(), p, map[bool]string{true: " (silent)"}[*silent])
	return 0, nil
}

func labRestore(ctx context.Context, args []string, stdout, _ io.Writer) (int, error) {
	l, p, err := openPath(flag.NewFlagSet("gocoll lab restore", flag.ContinueOnError), args, "gocoll lab restore [--name LAB] PATH")
	if err != nil {
		return labErr(err)
	}
	if err := l.Restore(ctx, p); err != nil {
		return labErr(err)
	}
	fmt.Fprintf(stdout, "lab %s: path %s restored\n", l.Name(), p)
	return 0, nil
}

// optFloat is a float flag that remembers whether it was given.
type optFloat struct {
	v   float64
	set bool
}

func (o *optFloat) String() string { return strconv.FormatFloat(o.v, 'g', -1, 64) }
func (o *optFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("not a number")
	}
	o.v, o.set = v, true
	return nil
}

func labShape(ctx context.Context, args []string, stdout, _ io.Writer) (int, error) {
	fs := flag.NewFlagSet("gocoll lab shape", flag.ContinueOnError)
	dir := fs.String("dir", "both", "fwd (lower site to higher), rev or both")
	var rate, delay, jitter, loss optFloat
	fs.Var(&rate, "rate", "rate, Mbit/s (0: unlimited)")
	fs.Var(&delay, "delay", "one-way delay, ms")
	fs.Var(&jitter, "jitter", "± jitter, ms")
	fs.Var(&loss, "loss", "random loss, percent")
	l, p, err := openPath(fs, args, "gocoll lab shape [--name LAB] PATH [--dir fwd|rev|both] [--rate MBIT] [--delay MS] [--jitter MS] [--loss PCT]")
	if err != nil {
		return labErr(err)
	}
	dirs, err := lab.ParseDirs(*dir)
	if err != nil {
		return exitUsage, err
	}
	if !rate.set && !delay.set && !jitter.set && !loss.set {
		return exitUsage, usagef("nothing to change: give --rate, --delay, --jitter or --loss")
	}
	for _, d := range dirs {
		sh, err := l.Shaping(p, d)
		if err != nil {
			return labErr(err)
		}
		for _, f := range []struct {
			o *optFloat
			v *float64
		}{{&rate, &sh.RateMbit}, {&delay, &sh.DelayMS}, {&jitter, &sh.JitterMS}, {&loss, &sh.LossPct}} {
			if f.o.set {
				*f.v = f.o.v
			}
		}
		if err := l.Shape(ctx, p, []lab.Dir{d}, sh); err != nil {
			return labErr(err)
		}
		fmt.Fprintf(stdout, "lab %s: path %s %s: rate %g Mbit/s, delay %g ms ± %g, loss %g%%\n", l.Name(), p, d, sh.RateMbit, sh.DelayMS, sh.JitterMS, sh.LossPct)
	}
	return 0, nil
}

func labStats(ctx context.Context, args []string, stdout, _ io.Writer) (int, error) {
	l, pos, err := openLab(flag.NewFlagSet("gocoll lab stats", flag.ContinueOnError), args)
	if err != nil {
		return labErr(err)
	}
	if len(pos) > 0 {
		return exitUsage, usagef("unexpected argument %q", pos[0])
	}
	stats, err := l.Stats(ctx)
	if err != nil {
		return labErr(err)
	}
	lab.FormatStats(stdout, stats)
	return 0, nil
}

func labRoute(ctx context.Context, args []string, stdout, _ io.Writer) (int, error) {
	const usage = "usage: gocoll lab route [--name LAB] SRC DST SPORT DPORT [udp|tcp]"
	l, pos, err := openLab(flag.NewFlagSet("gocoll lab route", flag.ContinueOnError), args)
	if err != nil {
		return labErr(err)
	}
	if len(pos) != 4 && len(pos) != 5 {
		return exitUsage, usagef(usage)
	}
	var ports [2]uint16
	for i, s := range pos[2:4] {
		v, err := strconv.ParseUint(s, 10, 16)
		if err != nil || v == 0 {
			return exitUsage, usagef("port %q: want 1 to 65535", s)
		}
		ports[i] = uint16(v)
	}
	proto := "udp"
	if len(pos) == 5 {
		proto = strings.ToLower(pos[4])
	}
	p, err := l.Route(ctx, pos[0], pos[1], ports[0], ports[1], proto)
	if err != nil {
		return labErr(err)
	}
	fmt.Fprintln(stdout, p)
	return 0, nil
}

func labList(_ context.Context, args []string, stdout, _ io.Writer) (int, error) {
	if len(args) > 0 {
		return exitUsage, usagef("unexpected argument %q", args[0])
	}
	names, err := lab.List()
	if err != nil {
		return 1, err
	}
	for _, n := range names {
		fmt.Fprintln(stdout, n)
	}
	return 0, nil
}
