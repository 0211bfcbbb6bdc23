package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/hosts"
	"github.com/gocoll/gocoll/launcher/job"
	"github.com/gocoll/gocoll/topology"
)

const runUsageHead = `usage: gocoll run [flags] [--] PROG ARGS...

Starts the ranks of PROG, which joins the job with gocoll.Init: here by fork
and exec, on other hosts through --rsh. Ranks are numbered site by site, then
host by host, in the order of the host list. Without --hostfile or --hosts,
-np ranks run on this host.

flags:
`

const runUsageTail = `
Durations (--timeout, --grace, --kill-after) are seconds, as mpirun's, or Go
durations (90s, 1h). A hostfile has Open MPI's lines "host slots=N
[max_slots=M] [site=NAME] [addr=IP]" or MPICH's "host:N"; see
go doc github.com/gocoll/gocoll/launcher/hosts.

A hang report asks every rank, through the job's store, for its record of
its recent operations, and names the rank that holds the others up (one that
never arrived at an operation, or stopped answering), the operation, and
whom each rank waits on. gocoll run prints one at --timeout, on SIGUSR1
(the job goes on; SIGUSR1 is not forwarded), every --diagnose SECONDS, and
when a rank's operation passes GOCOLL_STALL_TIMEOUT (30 s).

Exit status: 0 if every rank exited 0; else the first failed rank's status,
128+signal if a signal ended it or a forwarded signal stopped the job, 124
after --timeout; 2 for bad input (one line).
`

// runMain is gocoll run: it parses args (after "run"), runs the job and
// returns the exit status.
func runMain(args, environ []string, stdout, stderr io.Writer, sigs <-chan os.Signal) int {
	spec, err := parseRun(args, environ)
	if errors.Is(err, flag.ErrHelp) {
		writeRunUsage(stdout)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "gocoll run: %v\n", err)
		return exitUsage
	}
	spec.Stdout, spec.Stderr, spec.Signals = stdout, stderr, sigs
	res, err := job.RunRestarting(context.Background(), spec)
	if err != nil {
		fmt.Fprintf(stderr, "gocoll run: %v\n", err)
		return exitUsage
	}
	res.Report(stderr)
	return res.ExitCode()
}

// runFlag is one flag of gocoll run, as its help shows it.
type runFlag struct {
	names []string // the first is the main one, the others aliases
	arg   string   // the value's placeholder; "" for a switch
	help  string
	def   string // the default shown, "" for none
}

// runFlags describe gocoll run's flags, in the order of the help; parseRun
// defines them.
var runFlags = []runFlag{
	{[]string{"np", "n"}, "N", "number of ranks; mpirun's -n", "every slot of the hosts; required without them"},
	{[]string{"hostfile", "machinefile"}, "FILE", "hosts to run on: Open MPI's \"host slots=N\" or MPICH's \"host:N\" lines", ""},
	{[]string{"hosts", "H"}, "LIST", "hosts to run on: host:slots,host:slots (slots default 1)", ""},
	{[]string{"oversubscribe"}, "", "allow more ranks than slots (up to each host's max_slots): the extra ranks go to the hosts in turn", "refuse"},
	{[]string{"nproc-per-node"}, "N", "torchrun's name for -np: the ranks this launcher starts", ""},
	{[]string{"nnodes"}, "N", "this launcher is one of N nodes, each started on its own with the same flags but --node-rank; they meet at --rdzv-endpoint", "1"},
	{[]string{"node-rank"}, "K", "this node's number, 0 to N-1: its ranks are K*np to K*np+np-1; node 0 serves the job's store", "0"},
	{[]string{"rdzv-endpoint"}, "HOST:PORT", "where node 0 serves the store and the other nodes' ranks reach it", ""},
	{[]string{"rdzv-id"}, "ID", "the nodes' shared job key (16 or more printable characters) when GOCOLL_JOB_KEY is not set", ""},
	{[]string{"max-restarts"}, "N", "after a failed run, start the whole job again up to N times (with --nnodes, on every node at once); ranks find the count in GOCOLL_RESTART_COUNT and TORCHELASTIC_RESTART_COUNT", "0"},
	{[]string{"rdzv-timeout"}, "SECONDS", "with --nnodes and --max-restarts: how long the nodes wait for each other to come back for a restart, and to end once this node's ranks have succeeded", "300"},
	{[]string{"map-by"}, "slot|node", "fill each host's slots in turn (slot), or deal ranks to the hosts one each in turn (node)", job.MapBySlot},
	{[]string{"bind-to"}, "core|none", "bind each rank to a core of its own (a host's i-th rank to its i-th core; remote ranks bind themselves in gocoll.Init), or leave it free", job.BindNone},
	{[]string{"rsh"}, "CMD", "command that runs a command on {host} (appended if absent)", job.DefaultRsh},
	{[]string{"x"}, "VAR[=value]", "pass VAR, with its value here or the one given, to every rank; repeatable", ""},
	{[]string{"timeout"}, "SECONDS", "stop the job after this long (exit status 124), printing its hang report first", "none"},
	{[]string{"diagnose"}, "SECONDS", "print the running job's hang report every SECONDS (kill -USR1 on gocoll run prints one at any time)", "never"},
	{[]string{"diagnose-wait"}, "SECONDS", "how long a hang report waits for the ranks' answers (it ends as soon as all have answered); a rank that has not answered by then is reported as not answering (at most 60)", launcher.DefaultDiagnoseWait.String()},
	{[]string{"tag-output"}, "", "prefix each line of text with [rank N]; --tag-output=false drops it (JSON lines never get it)", "true"},
	{[]string{"no-prefix"}, "", "same as --tag-output=false", ""},
	{[]string{"output-dir"}, "DIR", "write rank N's output to DIR/rank.N.stdout and DIR/rank.N.stderr instead", ""},
	{[]string{"store"}, "MODE", "where the rendezvous store lives: auto (the launcher if every rank is local, else rank 0), launcher or rank0", job.StoreAuto},
	{[]string{"grace"}, "SECONDS", "after a rank fails, how long the others may end on their own before SIGTERM", job.DefaultGrace.String()},
	{[]string{"on-failure"}, "stop|continue", "when a rank fails: stop the others (after --grace), or let them go on (to shrink their communicator); the exit status reports the failure either way", job.OnFailureStop},
	{[]string{"kill-after"}, "SECONDS", "how long after SIGTERM a rank still running gets SIGKILL", job.DefaultKillAfter.String()},
	{[]string{"help", "h"}, "", "print this help", ""},
}

// writeRunUsage prints gocoll run's help: every flag, its aliases, what
// it does and its default.
func writeRunUsage(w io.Writer) {
	fmt.Fprint(w, runUsageHead)
	for _, f := range runFlags {
		var names []string
		for _, n := range f.names {
			names = append(names, flagName(n))
		}
		left := strings.Join(names, ", ")
		if f.arg != "" {
			left += " " + f.arg
		}
		help := f.help
		if f.def != "" {
			help += " (default " + f.def + ")"
		}
		fmt.Fprintf(w, "  %-26s %s\n", left, help)
	}
	fmt.Fprint(w, runUsageTail)
}

// flagName spells a flag as the help does: -x, -np, -H; --long.
func flagName(n string) string {
	if len(n) <= 2 {
		return "-" + n
	}
	return "--" + n
}

// repeated collects a repeatable flag's values.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// seconds is a duration flag that takes a number of seconds (mpirun's
// --timeout 5) or a Go duration (5s, 1m30s).
type seconds time.Duration

// maxSeconds bounds a duration flag.
const maxSeconds = 100 * 365 * 24 * time.Hour

func (s *seconds) String() string { return time.Duration(*s).String() }
func (s *seconds) Set(v string) error {
	d, err := parseSeconds(v)
	*s = seconds(d)
	return err
}

// parseSeconds reads "5", "2.5", "5s" or "1m30s": not negative, at most
// maxSeconds.
func parseSeconds(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		secs, serr := strconv.ParseFloat(v, 64)
		if serr != nil || secs != secs || secs > maxSeconds.Seconds() || secs < -maxSeconds.Seconds() {
			return 0, errors.New("want seconds (5, 2.5) or a duration (90s, 1h)")
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 0 || d > maxSeconds {
		return 0, fmt.Errorf("%v is outside [0, %v]", d, maxSeconds)
	}
	return d, nil
}

// parseRun turns gocoll run's arguments into a job spec.
func parseRun(args, environ []string) (job.Spec, error) {
	fs := flag.NewFlagSet("gocoll run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		np                           = -1
		hostfile, hostList, rsh      string
		outDir, storeMode            string
		tagOutput, noPrefix, oversub bool
		timeout, grace, killAfter    seconds
		diagnose, diagnoseWait       seconds
		exports                      repeated
		onFailure                    string
		mapBy, bindTo                string
		nprocPerNode, nnodes         int
		nodeRank, maxRestarts        int
		rdzvTimeout                  seconds
		rdzvEndpoint, rdzvID         string
	)
	grace, killAfter = seconds(job.DefaultGrace), seconds(job.DefaultKillAfter)
	rdzvTimeout = seconds(job.DefaultRdzvTimeout)
	diagnoseWait = seconds(launcher.DefaultDiagnoseWait)
	for _, f := range runFlags {
		for _, n := range f.names {
			switch f.names[0] {
			case "np":
				fs.IntVar(&np, n, -1, f.help)
			case "hostfile":
				fs.StringVar(&hostfile, n, "", f.help)
			case "hosts":
				fs.StringVar(&hostList, n, "", f.help)
			case "oversubscribe":
				fs.BoolVar(&oversub, n, false, f.help)
			case "nproc-per-node":
				fs.IntVar(&nprocPerNode, n, 0, f.help)
			case "nnodes":
				fs.IntVar(&nnodes, n, 0, f.help)
			case "node-rank":
				fs.IntVar(&nodeRank, n, 0, f.help)
			case "rdzv-endpoint":
				fs.StringVar(&rdzvEndpoint, n, "", f.help)
			case "rdzv-id":
				fs.StringVar(&rdzvID, n, "", f.help)
			case "max-restarts":
				fs.IntVar(&maxRestarts, n, 0, f.help)
			case "rdzv-timeout":
				fs.Var(&rdzvTimeout, n, f.help)
			case "map-by":
				fs.StringVar(&mapBy, n, job.MapBySlot, f.help)
			case "bind-to":
				fs.StringVar(&bindTo, n, job.BindNone, f.help)
			case "rsh":
				fs.StringVar(&rsh, n, job.DefaultRsh, f.help)
			case "x":
				fs.Var(&exports, n, f.help)
			case "timeout":
				fs.Var(&timeout, n, f.help)
			case "diagnose":
				fs.Var(&diagnose, n, f.help)
			case "diagnose-wait":
				fs.Var(&diagnoseWait, n, f.help)
			case "tag-output":
				fs.BoolVar(&tagOutput, n, true, f.help)
			case "no-prefix":
				fs.BoolVar(&noPrefix, n, false, f.help)
			case "output-dir":
				fs.StringVar(&outDir, n, "", f.help)
			case "store":
				fs.StringVar(&storeMode, n, job.StoreAuto, f.help)
			case "grace":
				fs.Var(&grace, n, f.help)
			case "kill-after":
				fs.Var(&killAfter, n, f.help)
			case "on-failure":
				fs.StringVar(&onFailure, n, job.OnFailureStop, f.help)
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return job.Spec{}, err
		}
		return job.Spec{}, flagError(err, args)
	}
	if fs.NArg() == 0 {
		return job.Spec{}, errors.New("no program to run (gocoll run [flags] -- PROG ARGS; see gocoll run --help)")
	}
	if rdzvTimeout == 0 { // job.Spec takes 0 for its default; the flag's default is set
		return job.Spec{}, errors.New("--rdzv-timeout 0: want a positive time (the nodes would never wait for each other)")
	}
	if diagnoseWait == 0 || time.Duration(diagnoseWait) > job.MaxDiagnoseWait { // job.Spec takes 0 for its default; the flag's default is set
		return job.Spec{}, fmt.Errorf("--diagnose-wait %v: want more than 0 (a hang report would hear from no rank) and at most %v", time.Duration(diagnoseWait), job.MaxDiagnoseWait)
	}
	spec := job.Spec{
		Program: program(fs.Arg(0)), Args: fs.Args()[1:], Rsh: rsh, Timeout: time.Duration(timeout),
		OutputDir: outDir, Store: storeMode, Grace: time.Duration(grace), KillAfter: time.Duration(killAfter),
		Export: exports, Environ: environ, LocalNames: localNames(), Untagged: !tagOutput || noPrefix,
		Oversubscribe: oversub, DiagnoseEvery: time.Duration(diagnose), DiagnoseWait: time.Duration(diagnoseWait),
	}
	spec.OnFailure = onFailure
	spec.MapBy, spec.BindTo = mapBy, bindTo
	spec.NNodes, spec.NodeRank, spec.RdzvEndpoint, spec.RdzvID = nnodes, nodeRank, rdzvEndpoint, rdzvID
	spec.MaxRestarts, spec.RdzvTimeout = maxRestarts, time.Duration(rdzvTimeout)
	if nprocPerNode != 0 {
		if np != -1 && np != nprocPerNode {
			return spec, fmt.Errorf("-np %d and --nproc-per-node %d disagree", np, nprocPerNode)
		}
		np = nprocPerNode
	}
	switch {
	case np == 0 || np < -1:
		return spec, fmt.Errorf("-np %d: want at least 1 rank", np)
	case np > 0:
		spec.NP = np
	case hostfile == "" && hostList == "":
		return spec, errors.New("-np is required without --hostfile or --hosts")
	}
	var err error
	spec.Hosts, spec.MaxSlots, err = readHosts(hostfile, hostList)
	return spec, err
}

// flagError rewrites the flag package's errors in gocoll's words: the
// flag as the user spelled it, and where the help is.
func flagError(err error, args []string) error {
	const hint = " (see gocoll run --help)"
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return fmt.Errorf("unknown flag %s%s", spelled(name, args), hint)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Errorf("flag %s needs a value%s", spelled(name, args), hint)
	}
	// invalid value "x" for flag -np: parse error
	if rest, ok := strings.CutPrefix(msg, "invalid "); ok {
		sep := " for flag -"
		if !strings.Contains(rest, sep) {
			sep = " for -" // booleans
		}
		if i := strings.Index(rest, sep); i >= 0 {
			name, why, _ := strings.Cut(rest[i+len(sep):], ": ")
			if why == "parse error" {
				why = "not a number"
				if strings.HasPrefix(rest, "boolean") {
					why = "want true or false"
				}
			}
			return fmt.Errorf("%s: bad value %s: %s%s", spelled(name, args), strings.TrimPrefix(strings.TrimPrefix(rest[:i], "boolean "), "value "), why, hint)
		}
	}
	return errors.New(msg + hint)
}

// spelled is flag name as it appears in args (-bogus or --bogus).
func spelled(name string, args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if n == name && strings.HasPrefix(a, "-") {
			before, _, _ := strings.Cut(a, "=")
			return before
		}
	}
	return flagName(name)
}

// program is the program to run: gocoll itself for "gocoll" when no
// gocoll is on PATH (gocoll run -np 2 gocoll bench, from a build that is
// not installed).
func program(p string) string {
	if p != "gocoll" {
		return p
	}
	if _, err := exec.LookPath(p); err == nil {
		return p
	}
	if self, err := os.Executable(); err == nil && filepath.Base(self) == "gocoll" {
		return self
	}
	return p
}

// readHosts reads the host list from --hostfile or --hosts (not both),
// and the hostfile's max_slots by host.
func readHosts(hostfile, hostList string) ([]topology.HostSlots, map[string]int, error) {
	switch {
	case hostfile != "" && hostList != "":
		return nil, nil, errors.New("give --hostfile or --hosts, not both")
	case hostfile != "":
		f, err := os.Open(hostfile)
		if err != nil {
			return nil, nil, fmt.Errorf("--hostfile: %v", err)
		}
		defer f.Close()
		entries, err := hosts.ReadHostfile(hostfile, f)
		if err != nil {
			return nil, nil, err
		}
		list := make([]topology.HostSlots, len(entries))
		maxSlots := map[string]int{}
		for i, e := range entries {
			list[i] = e.HostSlots
			if e.MaxSlots > 0 {
				maxSlots[e.Host] = e.MaxSlots
			}
		}
		return list, maxSlots, nil
	case hostList != "":
		list, err := hosts.ParseHostList(hostList)
		if err != nil {
			return nil, nil, fmt.Errorf("--hosts: %v", err)
		}
		return list, nil, nil
	}
	return nil, nil, nil
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
