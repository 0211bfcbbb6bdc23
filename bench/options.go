package bench

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// Limits and defaults of Options.
const (
	// DefaultRanks is the number of ranks a run started alone uses.
	DefaultRanks = 4
	// RanksMax bounds -np.
	RanksMax = 1024
	// SizesMax bounds the number of sizes one run sweeps.
	SizesMax = 1000
	// ItersMax bounds -n and -w.
	ItersMax = 1_000_000_000
	// ChecksMax bounds -c.
	ChecksMax = 1000
	// AggItersMax bounds -m: under -z 0 each of an iteration's calls has
	// buffers of its own.
	AggItersMax = 64
)

// Options is a parsed gocoll bench command line. The zero value is not
// useful; DefaultOptions gives nccl-tests' defaults.
type Options struct {
	// Colls are the collectives to run, in order: names from allreduce,
	// broadcast, reduce, allgather, reducescatter, alltoall, sendrecv.
	Colls []string
	// MinBytes and MaxBytes (-b, -e) bound the sizes swept, in bytes per
	// nccl-tests' definition of each collective. Default 32M each; at most
	// SizeMax.
	MinBytes, MaxBytes int64
	// StepFactor (-f) multiplies the size from one step to the next; 1 (the
	// default) adds StepBytes (-i, default 1M) instead.
	StepFactor int64
	StepBytes  int64
	// Sizes (--sizes), if not empty, lists the sizes instead of -b/-e/-f/-i.
	Sizes []int64
	// Iters (-n, default 20) calls are timed after Warmup (-w, default 1).
	Iters, Warmup int
	// Check (-c, default 1) is how many extra calls per measurement are
	// verified; 0 turns checking off (#wrong prints N/A).
	Check int
	// DataType (-d, default float32) and Op (-o, default sum).
	DataType dtype.DataType
	Op       reduce.Op
	// AllDataTypes (-d all) runs every data type (dtype.All) in turn,
	// instead of DataType; AllOps (-o all) every op the type has a kernel
	// for, instead of Op, for the collectives that reduce.
	AllDataTypes, AllOps bool
	// Root (-r, default 0) of Broadcast and Reduce; AllRoots (-r all) runs
	// them with every rank as the root in turn.
	Root     int
	AllRoots bool
	// AggIters (-m, nccl-tests' agg_iters, default 1) is the number of
	// calls in each timed iteration; the time reported is per call.
	AggIters int
	// Blocking (-z, nccl-tests' blocking, default 0): 1 waits for each
	// call before the next; 0 issues the AggIters calls of an iteration
	// at once, each on send and receive buffers of its own, and waits for
	// them together (with AggIters 1 the two are the same). gocoll's
	// calls are host calls, so "blocking" is the host waiting for each,
	// as nccl-tests' -z 1 synchronizes the stream after each.
	Blocking int
	// Ranks (-np) is the number of ranks a run started alone spawns (or,
	// in process, starts as goroutines): DefaultRanks if 0. Under a
	// launcher it is the launcher's, and -np, if given, must agree.
	Ranks int
	// Algo (--algo, default auto) forces the collective's algorithm.
	Algo collective.Algorithm
	// Transport (--transport): auto (shared memory when every rank is on
	// one host, else MetaRoCE), shm, metaroce (MetaRoCE over UDP), tcp,
	// mptcp or inproc. Empty means auto, or under a launcher the
	// launcher's (GOCOLL_TRANSPORT).
	Transport string
	// InProcess (--in-process) runs all ranks as goroutines of this process
	// over Transport (always so for inproc).
	InProcess bool
	// JSON (--json) prints one JSON object per size instead of the table.
	JSON bool
	// Format (--format) is nccl (default) or peers: the table of the shared
	// peer benchmarks (../shared/peers), labelled Label (--label, default
	// gocoll). The peers format rounds AllToAll sizes up to one element per
	// rank and times Broadcast in place and the rest out of place, as the
	// peers do.
	Format string
	Label  string
	// Timeout (--timeout, default 10m) bounds each collective call and the
	// set-up of the ranks.
	Timeout time.Duration
	// Average (-a, nccl-tests' -a) is how the ranks' times make the one
	// reported: AverageRank0, AverageMean, AverageMin or AverageMax.
	// Default AverageMax (the slowest rank, which the collective waits
	// for; nccl-tests' default is the mean).
	Average int
	// Cycles (-N, nccl-tests' run cycles, default 1) repeats the whole
	// sweep; 0 repeats it until Ctrl-C (or --timeout) stops the run.
	Cycles int
	// PeersSchedule (--peers-schedule SCALE, default 0: off), when
	// positive, sets each size's warm-up and timed iterations as
	// ../shared/peers' mpi_coll_bench -s SCALE does (PeersLoops), in place
	// of -w and -n: with every size in one job, as that benchmark runs,
	// each size is measured after the same calls on both sides.
	PeersSchedule float64
	// Settle (--settle, default 0: off) is how long each rank spins, with
	// no system call, before its first measurement. A Go process whose
	// every P was idle (a rank waiting for the others at the end of
	// set-up) restarts the runtime's monitor at a look every 20 us for its
	// first 50 looks; on a host whose ranks outnumber its processors each
	// look preempts a spinning rank, and under load lets other processes
	// in: the first milliseconds of a job's timed calls ran up to twice as
	// long as later ones (bench/results/shm_large.md, session 20). A settle
	// longer than those looks (20 ms) measures the calls without them; it
	// is a diagnosis, since no real job and no peer benchmark does it.
	Settle time.Duration
	// Fresh (--fresh, default off): before each call every rank changes
	// one byte in each 4 KiB page of its send buffer (bit 0 of the page's
	// first byte), so that no call's data equals the previous call's, as
	// a training step's new tensors; the checked calls still see the
	// pattern. Without it the timed calls resend the same bytes, as
	// nccl-tests and ../shared/peers' mpi_coll_bench do, and a root
	// Broadcast on the shared-memory board skips the pages it wrote last
	// time (collective's copyChanged), a saving new data does not get.
	// The writes are timed: one a page.
	Fresh bool
}

// PeersScheduleMax bounds Options.PeersSchedule; SettleMax bounds
// Options.Settle.
const (
	PeersScheduleMax = 1000
	SettleMax        = 10 * time.Second
)

// PeersLoops returns the warm-up and timed iterations of mpi_coll_bench
// (../shared/peers) for a call of the given bytes at scale: 50 and 1000 up
// to 1 KiB, 20 and 200 up to 64 KiB, 5 and 50 up to 1 MiB, 2 and 10 up to
// 16 MiB, 2 and 5 above; the iterations times scale, rounded, at least 1;
// the warm-ups times scale only where scale is below 1, at least 1.
func PeersLoops(bytes int64, scale float64) (warmup, iters int) {
	w, i := 2, 5
	switch {
	case bytes <= 1<<10:
		w, i = 50, 1000
	case bytes <= 64<<10:
		w, i = 20, 200
	case bytes <= 1<<20:
		w, i = 5, 50
	case bytes <= 16<<20:
		w, i = 2, 10
	}
	iters = max(int(float64(i)*scale+0.5), 1)
	warmup = max(int(float64(w)*min(scale, 1)+0.5), 1)
	return warmup, iters
}

// The values of Options.Average, nccl-tests' -a 0..3.
const (
	AverageRank0 = 0 // rank 0's time
	AverageMean  = 1 // the mean over the ranks
	AverageMin   = 2 // the fastest rank's
	AverageMax   = 3 // the slowest rank's
)

// DefaultOptions returns the defaults: nccl-tests' for the flags it has.
func DefaultOptions() Options {
	return Options{MinBytes: 32 << 20, MaxBytes: 32 << 20, StepFactor: 1, StepBytes: 1 << 20,
		Iters: 20, Warmup: 1, Check: 1, DataType: dtype.Float32, Op: reduce.Sum, AggIters: 1,
		Format: "nccl", Label: "gocoll", Timeout: 10 * time.Minute, Average: AverageMax, Cycles: 1}
}

// kernelLookup finds the reduction kernel of a type and op (a variable so
// that a test can stand in a pair gocoll lacks: today every valid pair has
// a kernel).
var kernelLookup = reduce.Lookup

// validate checks the options that do not depend on the world size.
func (o *Options) validate() error {
	if len(o.Colls) == 0 {
		return fmt.Errorf("no collective given (want %s or all)", collNames())
	}
	kinds, err := parseColls(joinNames(o.Colls))
	if err != nil {
		return err
	}
	if err := o.validateSizes(); err != nil {
		return err
	}
	checks := []struct {
		name      string
		v, lo, hi int64
	}{
		{"-n (iterations)", int64(o.Iters), 1, ItersMax},
		{"-w (warm-up iterations)", int64(o.Warmup), 0, ItersMax},
		{"-c (check)", int64(o.Check), 0, ChecksMax},
		{"-np (ranks)", int64(o.Ranks), 0, RanksMax},
		{"-r (root)", int64(o.Root), 0, RanksMax - 1},
		{"-m (agg_iters)", int64(o.AggIters), 1, AggItersMax},
		{"-z (blocking)", int64(o.Blocking), 0, 1},
	}
	for _, c := range checks {
		if c.v < c.lo || c.v > c.hi {
			return fmt.Errorf("%s %d out of range [%d, %d]", c.name, c.v, c.lo, c.hi)
		}
	}
	if !(o.PeersSchedule >= 0 && o.PeersSchedule <= PeersScheduleMax) {
		return fmt.Errorf("--peers-schedule %v out of range [0, %d]", o.PeersSchedule, PeersScheduleMax)
	}
	if o.Settle < 0 || o.Settle > SettleMax {
		return fmt.Errorf("--settle %v out of range [0, %v]", o.Settle, SettleMax)
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout %v must be positive", o.Timeout)
	}
	if o.Cycles < 0 {
		return fmt.Errorf("-N %d: want a number of cycles, or 0 to run until stopped", o.Cycles)
	}
	if o.Average < AverageRank0 || o.Average > AverageMax {
		return fmt.Errorf("-a %d: want 0 (rank 0), 1 (mean), 2 (min) or 3 (max)", o.Average)
	}
	return o.validateChoices(kinds)
}

// validateChoices checks type, op, algorithm, transport and format.
func (o *Options) validateChoices(kinds []collKind) error {
	if !o.DataType.Valid() {
		return fmt.Errorf("invalid data type %v", o.DataType)
	}
	if !o.Op.Valid() {
		return fmt.Errorf("invalid op %v", o.Op)
	}
	for _, k := range kinds {
		info := k.info()
		if info.reduces && !o.AllDataTypes && !o.AllOps {
			if _, err := kernelLookup(o.DataType, o.Op); err != nil {
				return fmt.Errorf("%s: data type %v does not support op %v", info.name, o.DataType, o.Op)
			}
		}
		if err := info.checkAlgo(o.Algo); err != nil {
			return err
		}
	}
	switch o.Transport {
	case "", "auto", "shm", "metaroce", "tcp", "mptcp", "inproc":
	default:
		return fmt.Errorf("unknown transport %s (want auto, shm, metaroce, tcp, mptcp or inproc)", quoteArg(o.Transport))
	}
	switch {
	case o.Format != "nccl" && o.Format != "peers":
		return fmt.Errorf("unknown format %s (want nccl or peers)", quoteArg(o.Format))
	case o.Format == "peers" && o.JSON:
		return errors.New("--json and --format peers exclude each other")
	case o.Label == "" || len(o.Label) > 64 || !isWord(o.Label):
		return fmt.Errorf("--label %s must be 1 to 64 letters, digits, '-', '_' or '.'", quoteArg(o.Label))
	}
	return nil
}

// validateSizes checks -b, -e, -f, -i and --sizes.
func (o *Options) validateSizes() error {
	if len(o.Sizes) > 0 {
		if len(o.Sizes) > SizesMax {
			return fmt.Errorf("--sizes lists %d sizes (at most %d)", len(o.Sizes), SizesMax)
		}
		return nil
	}
	switch {
	case o.MinBytes < 0 || o.MaxBytes < 0:
		return errors.New("negative size")
	case o.MaxBytes < o.MinBytes:
		return fmt.Errorf("-e (maxbytes) %d is below -b (minbytes) %d", o.MaxBytes, o.MinBytes)
	case o.StepFactor < 1:
		return fmt.Errorf("-f (step factor) %d must be at least 1", o.StepFactor)
	case o.StepFactor == 1 && o.StepBytes < 1:
		return fmt.Errorf("-i (step bytes) %d must be at least 1", o.StepBytes)
	case o.StepFactor > 1 && o.MinBytes == 0:
		return errors.New("-b (minbytes) 0 with -f above 1 would never grow; start at 1 or more")
	}
	if n := len(o.sweep()); n > SizesMax {
		return fmt.Errorf("-b %d -e %d sweeps more than %d sizes; raise -f or -i", o.MinBytes, o.MaxBytes, SizesMax)
	}
	return nil
}

// sweep lists the sizes to run, ascending; it stops after SizesMax+1.
func (o *Options) sweep() []int64 {
	if len(o.Sizes) > 0 {
		return o.Sizes
	}
	var out []int64
	for s := o.MinBytes; s <= o.MaxBytes && len(out) <= SizesMax; {
		out = append(out, s)
		next := s + o.StepBytes
		if o.StepFactor > 1 {
			next = s * o.StepFactor
		}
		if o.StepFactor > 1 && s > SizeMax/o.StepFactor {
			break // the next size would pass SizeMax, and so MaxBytes
		}
		if next <= s {
			break
		}
		s = next
	}
	return out
}

func isWord(s string) bool {
	for _, r := range s {
		ok := r == '-' || r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !ok {
			return false
		}
	}
	return true
}

// localRanks is the number of ranks of a run started alone.
func (o *Options) localRanks() int {
	if o.Ranks == 0 {
		return DefaultRanks
	}
	return o.Ranks
}

// joinNames joins collective names into the list form parseColls reads.
func joinNames(names []string) string { return strings.Join(names, ",") }
