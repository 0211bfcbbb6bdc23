package bench

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

// ErrHelp is returned by ParseArgs for -h or --help.
var ErrHelp = errors.New("help requested")

// ArgsMax bounds the number of command-line arguments ParseArgs reads.
const ArgsMax = 1000

// flagSpec is one command-line flag: its names and how it sets Options.
type flagSpec struct {
	short, long string // short without its dash ("b", "np"), long without "--"
	boolean     bool   // takes no value (an "=true"/"=false" suffix is allowed)
	set         func(o *Options, v string) error
	help        string
}

// name is the flag as the help text shows it first.
func (s *flagSpec) name() string {
	if s.short != "" {
		return "-" + s.short
	}
	return "--" + s.long
}

var flagSpecs = []flagSpec{
	{short: "b", long: "minbytes", set: setSize(func(o *Options) *int64 { return &o.MinBytes }), help: "minimum size in bytes, with K, M or G (default 32M)"},
	{short: "e", long: "maxbytes", set: setSize(func(o *Options) *int64 { return &o.MaxBytes }), help: "maximum size (default 32M)"},
	{short: "f", long: "stepfactor", set: setInt64(func(o *Options) *int64 { return &o.StepFactor }), help: "multiply the size by this each step (default 1: add -i)"},
	{short: "i", long: "stepbytes", set: setSize(func(o *Options) *int64 { return &o.StepBytes }), help: "add this to the size each step when -f is 1 (default 1M)"},
	{long: "sizes", set: setSizes, help: "comma-separated sizes, instead of -b -e -f -i"},
	{short: "n", long: "iters", set: setInt(func(o *Options) *int { return &o.Iters }), help: "timed iterations (default 20)"},
	{short: "w", long: "warmup_iters", set: setInt(func(o *Options) *int { return &o.Warmup }), help: "warm-up iterations (default 1)"},
	{long: "peers-schedule", set: setPeersSchedule, help: "per size, warm-up and timed iterations as ../shared/peers' mpi_coll_bench -s SCALE (50/1000 up to 1 KiB, 20/200 up to 64 KiB, 5/50 up to 1 MiB, 2/10 up to 16 MiB, 2/5 above; iterations times SCALE) instead of -w and -n (default 0: off)"},
	{long: "settle", set: setDuration(func(o *Options) *time.Duration { return &o.Settle }, SettleMax, "20ms"), help: "each rank spins this long (a duration, or seconds) before its first measurement, so that the Go runtime's monitor, which looks every 20 us for a while after a process was idle (as at the end of set-up), has backed off before the timed calls; for diagnosis: neither the peers nor a real job do this (default 0: off)"},
	{long: "fresh", boolean: true, set: setBool(func(o *Options) *bool { return &o.Fresh }), help: "change one byte in each 4 KiB page of every send buffer before each call, so that no call resends the last call's data (as a training step's new tensors; without it the calls resend the same bytes, as nccl-tests and the peers do)"},
	{short: "c", long: "check", set: setInt(func(o *Options) *int { return &o.Check }), help: "verified iterations per measurement, 0 for none (default 1)"},
	{short: "d", long: "datatype", set: setDataType, help: "data type: float, double, bf16, half, int8, uint8, int32, uint32, int64, uint64, f8e4m3, f8e5m2, or all (default float)"},
	{short: "o", long: "op", set: setOp, help: "reduction: sum, prod, min, max, avg, or all (default sum)"},
	{short: "r", long: "root", set: setRoot, help: "root rank of broadcast and reduce, or all (every rank in turn) (default 0)"},
	{short: "m", long: "agg_iters", set: setInt(func(o *Options) *int { return &o.AggIters }), help: "calls per timed iteration; the time is per call (default 1)"},
	{short: "z", long: "blocking", set: setInt(func(o *Options) *int { return &o.Blocking }), help: "1: wait for each call before the next; 0: issue an iteration's -m calls at once (each on buffers of its own) and wait for them together (default 0)"},
	{short: "np", long: "np", set: setRanks, help: "ranks to start when run alone (default 4)"},
	{long: "algo", set: setAlgo, help: "algorithm: " + algoNames() + " (default auto)"},
	{long: "transport", set: func(o *Options, v string) error { o.Transport = v; return nil }, help: "auto, shm, metaroce, tcp, mptcp or inproc (default auto: shared memory on one host, MetaRoCE across hosts; under a launcher, the launcher's)"},
	{long: "in-process", boolean: true, set: setBool(func(o *Options) *bool { return &o.InProcess }), help: "run every rank as a goroutine of this process"},
	{long: "json", boolean: true, set: setBool(func(o *Options) *bool { return &o.JSON }), help: "one JSON object per size instead of the table"},
	{long: "format", set: func(o *Options, v string) error { o.Format = v; return nil }, help: "nccl (default) or peers (the ../shared/peers table)"},
	{long: "label", set: func(o *Options, v string) error { o.Label = v; return nil }, help: "label of the peers table (default gocoll)"},
	{short: "a", long: "average", set: setInt(func(o *Options) *int { return &o.Average }), help: "time reported: 0 rank 0's, 1 the mean, 2 the fastest rank's, 3 the slowest's (default 3; nccl-tests' 1)"},
	{short: "N", long: "run_cycles", set: setInt(func(o *Options) *int { return &o.Cycles }), help: "run every collective and size this many times, 0 until Ctrl-C (default 1)"},
	{short: "T", long: "timeout", set: setDuration(func(o *Options) *time.Duration { return &o.Timeout }, maxTimeout, "30s or 5m"), help: "bound on each call and on set-up, seconds or a duration (default 10m)"},
	{short: "h", long: "help", boolean: true, set: func(*Options, string) error { return ErrHelp }, help: "print this help"},
}

// ParseArgs reads a gocoll bench command line (without the program and
// subcommand names): one positional argument naming the collectives (a
// name, a comma-separated list, or "all"), and flags as "-b 8", "-b8",
// "-b=8", "--minbytes 8" or "--minbytes=8", in any order; "--" ends the
// flags. It returns the validated Options, ErrHelp for -h, or an error
// that fits on one line.
func ParseArgs(args []string) (Options, error) {
	o := DefaultOptions()
	if len(args) > ArgsMax {
		return o, fmt.Errorf("%d arguments (at most %d)", len(args), ArgsMax)
	}
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		spec, value, hasValue, err := lookupFlag(a)
		if err != nil {
			return o, err
		}
		if !spec.boolean && !hasValue {
			if i+1 >= len(args) {
				return o, fmt.Errorf("flag %s needs a value", spec.name())
			}
			i++
			value = args[i]
		}
		if err := spec.set(&o, value); err != nil {
			if errors.Is(err, ErrHelp) {
				return o, err
			}
			return o, fmt.Errorf("flag %s: %w", spec.name(), err)
		}
	}
	if len(positional) != 1 {
		return o, fmt.Errorf("want one collective (%s, a comma-separated list, or all), got %d arguments", collNames(), len(positional))
	}
	colls, err := parseColls(positional[0])
	if err != nil {
		return o, err
	}
	for _, k := range colls {
		o.Colls = append(o.Colls, k.String())
	}
	return o, o.validate()
}

// lookupFlag finds the spec of argument a (which starts with '-') and any
// value attached to it ("-b8", "-b=8", "--minbytes=8").
func lookupFlag(a string) (spec *flagSpec, value string, hasValue bool, err error) {
	name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
	long := strings.HasPrefix(a, "--")
	for i := range flagSpecs {
		s := &flagSpecs[i]
		if (long && name == s.long) || (!long && s.short != "" && name == s.short) {
			return s, value, hasValue, nil
		}
	}
	if !long && !hasValue && len(name) > 1 {
		for i := range flagSpecs { // "-b8": a one-letter flag with its value
			s := &flagSpecs[i]
			if len(s.short) == 1 && !s.boolean && name[:1] == s.short {
				return s, name[1:], true, nil
			}
		}
	}
	return nil, "", false, fmt.Errorf("unknown flag %s (see -h)", quoteArg(a))
}

// quoteArg shows an argument in an error: quoted (so that it stays on
// one line) and cut to a sane length.
func quoteArg(a string) string {
	const keep = 48
	q := strconv.Quote(a)
	if len(q) > keep {
		return q[:keep] + `"...`
	}
	return q
}

func setSize(field func(*Options) *int64) func(*Options, string) error {
	return func(o *Options, v string) error {
		n, err := ParseSize(v)
		*field(o) = n
		return err
	}
}

func setSizes(o *Options, v string) error {
	o.Sizes = o.Sizes[:0]
	for part := range strings.SplitSeq(v, ",") {
		n, err := ParseSize(part)
		if err != nil {
			return err
		}
		if len(o.Sizes) > 0 && n <= o.Sizes[len(o.Sizes)-1] {
			return fmt.Errorf("sizes must increase: %s after %d", quoteArg(part), o.Sizes[len(o.Sizes)-1])
		}
		if len(o.Sizes) == SizesMax {
			return fmt.Errorf("more than %d sizes", SizesMax)
		}
		o.Sizes = append(o.Sizes, n)
	}
	return nil
}

func setInt64(field func(*Options) *int64) func(*Options, string) error {
	return func(o *Options, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%s is not an integer", quoteArg(v))
		}
		*field(o) = n
		return nil
	}
}

func setInt(field func(*Options) *int) func(*Options, string) error {
	return func(o *Options, v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return fmt.Errorf("%s is not an integer in the range of int32", quoteArg(v))
		}
		*field(o) = int(n)
		return nil
	}
}

func setPeersSchedule(o *Options, v string) error {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return fmt.Errorf("%s is not a number", quoteArg(v))
	}
	o.PeersSchedule = f
	return nil
}

func setRanks(o *Options, v string) error {
	if err := setInt(func(o *Options) *int { return &o.Ranks })(o, v); err != nil {
		return err
	}
	if o.Ranks < 1 {
		return fmt.Errorf("%d ranks: want at least 1", o.Ranks)
	}
	return nil
}

func setBool(field func(*Options) *bool) func(*Options, string) error {
	return func(o *Options, v string) error {
		switch v {
		case "", "true", "1":
			*field(o) = true
		case "false", "0":
			*field(o) = false
		default:
			return fmt.Errorf("%s is not true or false", quoteArg(v))
		}
		return nil
	}
}

func setDataType(o *Options, v string) error {
	o.AllDataTypes = v == "all"
	if o.AllDataTypes {
		return nil
	}
	t, err := dtype.Parse(v)
	if err != nil {
		return fmt.Errorf("unknown data type %s (want %s, all, or nccl-tests' float, double, bf16, half, int, uint, f8e4m3, f8e5m2)", quoteArg(v), dataTypeNames())
	}
	o.DataType = t
	return nil
}

func setOp(o *Options, v string) error {
	o.AllOps = v == "all"
	if o.AllOps {
		return nil
	}
	op, err := reduce.ParseOp(v)
	if err != nil {
		return fmt.Errorf("unknown op %s (want sum, prod, min, max, avg or all)", quoteArg(v))
	}
	o.Op = op
	return nil
}

func setRoot(o *Options, v string) error {
	o.AllRoots = v == "all"
	if o.AllRoots {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return fmt.Errorf("%s is not a rank or all", quoteArg(v))
	}
	o.Root = int(n)
	return nil
}

func setAlgo(o *Options, v string) error {
	a, err := collective.ParseAlgorithm(v)
	if err != nil {
		return fmt.Errorf("unknown algorithm %s (want %s)", quoteArg(v), algoNames())
	}
	o.Algo = a
	return nil
}

// dataTypeNames lists every data type's name.
func dataTypeNames() string {
	var names []string
	for _, t := range dtype.All() {
		names = append(names, t.String())
	}
	return strings.Join(names, ", ")
}

// algoNames lists every algorithm's name: those that ParseAlgorithm takes
// back, from AlgoAuto on.
func algoNames() string {
	var names []string
	for a := collective.AlgoAuto; ; a++ {
		if b, err := collective.ParseAlgorithm(a.String()); err != nil || b != a {
			break
		}
		names = append(names, a.String())
	}
	return strings.Join(names, ", ")
}

// setDuration returns the setter of a duration flag (field): a duration
// such as example, or a number of seconds (mpirun's and nccl-tests' form)
// of at most limit; validate checks the bounds of either form.
func setDuration(field func(*Options) *time.Duration, limit time.Duration, example string) func(*Options, string) error {
	return func(o *Options, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			secs, serr := strconv.ParseFloat(v, 64)
			if serr != nil || secs != secs || secs > limit.Seconds() {
				return fmt.Errorf("%s is not a duration such as %s, or a number of seconds", quoteArg(v), example)
			}
			d = time.Duration(secs * float64(time.Second))
		}
		*field(o) = d
		return nil
	}
}

// maxTimeout bounds --timeout given in seconds (a Duration holds 292 years).
const maxTimeout = 24 * time.Hour * 365
