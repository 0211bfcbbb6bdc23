package job

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/topology"
)

// Where the rendezvous store of a job lives (Spec.Store).
const (
	// StoreAuto: with the launcher if every rank runs on this host, else
	// with rank 0.
	StoreAuto = "auto"
	// StoreLauncher: the launcher serves it, on loopback if every rank is
	// local, else on every interface; the ranks must reach the launcher.
	StoreLauncher = "launcher"
	// StoreRank0: rank 0 serves it at its host's address (addr= or the host
	// name) on a port derived from the job id; the launcher need not be
	// reachable from the ranks, and follows the job through its children.
	StoreRank0 = "rank0"
)

// Defaults of Spec.
const (
	DefaultGrace     = 2 * time.Second
	DefaultKillAfter = 3 * time.Second
	DefaultTailLines = 10
	// MaxTailLines bounds Spec.TailLines.
	MaxTailLines = 1000
	// MaxExports bounds len(Spec.Export).
	MaxExports = 1024
	// MaxDiagnoseWait bounds Spec.DiagnoseWait.
	MaxDiagnoseWait = time.Minute
	// DefaultRdzvTimeout is Spec.RdzvTimeout's default (torchrun's exit
	// barrier's), MaxRdzvTimeout its bound.
	DefaultRdzvTimeout = 5 * time.Minute
	MaxRdzvTimeout     = 24 * time.Hour
)

// Spec describes a job for Run. Program is required; every other field has
// a default.
type Spec struct {
	Program string   // run on every rank (looked up in PATH for local ranks)
	Args    []string // its arguments

	// NP is the number of ranks; 0 means every slot of Hosts. Ranks fill
	// the slots in the order topology.AssignRanks numbers them: site by
	// site, host by host. NP above the slots in Hosts is an error.
	NP int
	// Hosts lists where ranks may run; nil means NP ranks on this host.
	Hosts []topology.HostSlots
	// Oversubscribe lets NP exceed the slots of Hosts (gocoll run
	// --oversubscribe): the extra ranks go to the hosts one each in turn,
	// in list order, each host up to its MaxSlots. Without it, NP above
	// the slots is an error.
	Oversubscribe bool
	// MaxSlots bounds, by host name, the ranks Oversubscribe may put on a
	// host (a hostfile's max_slots=); a host absent has no bound.
	MaxSlots map[string]int
	// MapBy is how ranks fill the slots: MapBySlot (the default) or
	// MapByNode (gocoll run --map-by).
	MapBy string
	// BindTo binds ranks to CPUs: BindNone (the default) or BindCore
	// (gocoll run --bind-to): local ranks at fork, remote ones as they
	// join (see BindCore).
	BindTo string
	// LocalNames are the names of this host (its hostname); ranks on these
	// hosts, on "localhost" and on loopback addresses are started here by
	// fork and exec, the others through Rsh.
	LocalNames []string
	// Rsh is the command that starts a process on a remote host, with
	// {host} where the host name goes (appended if absent). Default
	// DefaultRsh. The rank's command follows as arguments; for ssh and rsh,
	// which hand them to a remote shell, each is shell-quoted.
	Rsh string
	// Store is StoreAuto (the default), StoreLauncher or StoreRank0.
	Store string

	// Environ is the launcher's environment; local ranks inherit it.
	Environ []string
	// Export lists variables to pass to every rank, local and remote:
	// NAME (its value in Environ) or NAME=value, like mpirun -x.
	Export []string

	// Timeout ends the job (exit status 124) if it runs longer; 0: never.
	Timeout time.Duration
	// Grace is how long, after the first rank fails, the others may end on
	// their own (reporting their errors) before they are sent SIGTERM.
	// Default DefaultGrace.
	Grace time.Duration
	// KillAfter is how long after SIGTERM a rank still running gets
	// SIGKILL. Default DefaultKillAfter.
	KillAfter time.Duration
	// OnFailure is what a rank's failure does to the others:
	// OnFailureStop (the default) stops them after Grace;
	// OnFailureContinue leaves them running, so that they can shrink
	// their communicator and go on (collective.Comm.Shrink). Either way
	// the exit status reports the failure.
	OnFailure string

	// OutputDir, if set, receives each rank's output in its own files,
	// rank.N.stdout and rank.N.stderr; else every line goes to Stdout or
	// Stderr prefixed "[rank N] " (but for lines of stdout that are JSON
	// objects, which go as they are: see the package doc).
	OutputDir string
	// Untagged drops the "[rank N] " prefix from every line (gocoll run
	// --tag-output=false, --no-prefix).
	Untagged       bool
	Stdout, Stderr io.Writer // default os.Stdout, os.Stderr
	// TailLines is how many last lines of output per rank the report
	// keeps, in [1, MaxTailLines]. Default DefaultTailLines.
	TailLines int

	// Signals, if not nil, delivers signals to forward to every rank:
	// SIGINT, SIGTERM and SIGHUP also stop the job; others (SIGUSR2) are
	// only forwarded. A second SIGINT kills every rank. SIGUSR1 is not
	// forwarded: it prints the job's hang report (see Hang), and the job
	// goes on.
	Signals <-chan os.Signal
	// DiagnoseEvery, if positive, prints the job's hang report every
	// DiagnoseEvery while it runs (gocoll run --diagnose). Whatever it
	// is, a report is printed when Timeout passes, on SIGUSR1, and when a
	// rank's operation passes its stall threshold (GOCOLL_STALL_TIMEOUT).
	DiagnoseEvery time.Duration
	// DiagnoseWait bounds how long a hang report waits for the ranks'
	// answers; a rank silent that long (stopped, gone) is reported as not
	// answering (gocoll run --diagnose-wait). A report ends as soon as
	// every rank has answered. Default launcher.DefaultDiagnoseWait, at
	// most MaxDiagnoseWait.
	DiagnoseWait time.Duration
	// JobID names the job; default a random one (for NNodes, one derived
	// from the job key, the same on every node).
	JobID string

	// NNodes, if above 0, makes this launcher one node of a job of NNodes
	// nodes, as torchrun --nnodes: it starts NP ranks here (its
	// --nproc-per-node), ranks NodeRank*NP to NodeRank*NP+NP-1 of
	// NNodes*NP, every node giving the same NP. Each node is started on
	// its own; they meet at RdzvEndpoint (host:port), where node 0's
	// launcher serves the job's store. Every node takes the job key from
	// GOCOLL_JOB_KEY in Environ, else from RdzvID (then at least 16
	// printable characters), rather than each making its own. Hosts, if
	// given, is one entry: this node's name in the job.
	NNodes, NodeRank int
	RdzvEndpoint     string
	RdzvID           string
	// MaxRestarts is how many times RunRestarting starts the whole job
	// again after a failed run (torchrun --max-restarts); Run ignores it.
	// With NNodes above 1 every node must give the same value, and the
	// nodes agree on each restart through the store (see RunRestarting).
	MaxRestarts int
	// RdzvTimeout bounds how long the nodes of a job that restarts
	// (NNodes above 1, MaxRestarts above 0) wait for each other: for every
	// node to come back for a restart, and, once this node's ranks have
	// succeeded, for every other node's to end. A node later than that
	// fails the job, in one line on every node. Default
	// DefaultRdzvTimeout, at most MaxRdzvTimeout.
	RdzvTimeout time.Duration
}

// withDefaults fills in defaults and checks the fields that do not need
// the host list.
func (s Spec) withDefaults() (Spec, error) {
	if s.Program == "" {
		return s, fmt.Errorf("no program to run (gocoll run [flags] -- PROG ARGS)")
	}
	if s.NP < 0 || s.NP == 0 && len(s.Hosts) == 0 {
		return s, fmt.Errorf("-np %d: want at least 1 rank", s.NP)
	}
	if s.Rsh == "" {
		s.Rsh = DefaultRsh
	}
	if s.Store == "" {
		s.Store = StoreAuto
	}
	if s.Store != StoreAuto && s.Store != StoreLauncher && s.Store != StoreRank0 {
		return s, fmt.Errorf("--store %q: want %s, %s or %s", s.Store, StoreAuto, StoreLauncher, StoreRank0)
	}
	if s.Grace <= 0 {
		s.Grace = DefaultGrace
	}
	if err := s.checkMapping(); err != nil {
		return s, err
	}
	if err := s.checkNodes(); err != nil {
		return s, err
	}
	if err := s.fillOnFailure(); err != nil {
		return s, err
	}
	if s.KillAfter <= 0 {
		s.KillAfter = DefaultKillAfter
	}
	if s.TailLines == 0 {
		s.TailLines = DefaultTailLines
	}
	if s.TailLines < 1 || s.TailLines > MaxTailLines {
		return s, fmt.Errorf("tail of %d lines: want 1 to %d", s.TailLines, MaxTailLines)
	}
	if s.Timeout < 0 {
		return s, fmt.Errorf("--timeout %v is negative", s.Timeout)
	}
	if s.DiagnoseEvery < 0 {
		return s, fmt.Errorf("--diagnose %v is negative", s.DiagnoseEvery)
	}
	if s.RdzvTimeout == 0 {
		s.RdzvTimeout = DefaultRdzvTimeout
	}
	if s.RdzvTimeout < 0 || s.RdzvTimeout > MaxRdzvTimeout {
		return s, fmt.Errorf("--rdzv-timeout %v: want (0, %v]", s.RdzvTimeout, MaxRdzvTimeout)
	}
	if s.DiagnoseWait == 0 {
		s.DiagnoseWait = launcher.DefaultDiagnoseWait
	}
	if s.DiagnoseWait < 0 || s.DiagnoseWait > MaxDiagnoseWait {
		return s, fmt.Errorf("hang report wait %v: want (0, %v]", s.DiagnoseWait, MaxDiagnoseWait)
	}
	if s.Stdout == nil {
		s.Stdout = os.Stdout
	}
	if s.Stderr == nil {
		s.Stderr = os.Stderr
	}
	if s.JobID == "" {
		s.JobID = randomHex(8)
	}
	return s, checkExports(s.Export)
}

// checkExports checks -x entries: NAME or NAME=value, NAME a shell name.
func checkExports(exports []string) error {
	if len(exports) > MaxExports {
		return fmt.Errorf("more than %d -x variables", MaxExports)
	}
	for _, e := range exports {
		name, _, _ := strings.Cut(e, "=")
		if !isShellName(name) {
			return fmt.Errorf("-x %q: %q is not a variable name", e, name)
		}
	}
	return nil
}

func isShellName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails on Linux (crypto/rand panics rather than return an error)
	return hex.EncodeToString(b)
}
