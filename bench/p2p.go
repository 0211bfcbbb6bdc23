package bench

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// P2PCommand is the first argument of gocoll bench that selects the
// point-to-point benchmark: one connection, rank 0 sending to rank 1.
const P2PCommand = "p2p"

// Limits of P2POptions.
const (
	P2PTimeMax      = 24 * time.Hour
	P2PIntervalMin  = 10 * time.Millisecond
	P2PMsgMin       = 8 // a message carries its kind in its first byte
	P2PMsgMax       = 1 << 30
	P2PInFlightMax  = 1024    // messages in flight
	P2PWindowMaxLen = 4 << 30 // bytes in flight
)

// P2POptions is a parsed gocoll bench p2p command line.
type P2POptions struct {
	// Time (--time, default 10s) is how long rank 0 sends, at most
	// P2PTimeMax; Interval (--interval, default 1s) how often it reports,
	// from P2PIntervalMin to Time.
	Time, Interval time.Duration
	// MsgBytes (--size, default 4M) is the size of each message; Window
	// (--window, default 16M) the bytes of messages in flight at once, a
	// multiple of MsgBytes of at most P2PInFlightMax messages.
	MsgBytes, Window int64
	// Transport (--transport): metaroce (the default of a run started
	// alone), tcp, mptcp, shm or auto; under a launcher, empty means the
	// launcher's (GOCOLL_TRANSPORT).
	Transport string
	// InProcess (--in-process) runs both ranks as goroutines of this
	// process.
	InProcess bool
	// JSON (--json) prints one JSON object per interval, and one for the
	// whole run, instead of the table.
	JSON bool
	// Timeout (--timeout, default 1m) bounds the set-up of the ranks and
	// each wait for a message.
	Timeout time.Duration
}

// DefaultP2POptions returns the defaults.
func DefaultP2POptions() P2POptions {
	return P2POptions{Time: 10 * time.Second, Interval: time.Second, MsgBytes: 4 << 20, Window: 16 << 20,
		Timeout: time.Minute}
}

// p2pFlag is one flag of gocoll bench p2p.
type p2pFlag struct {
	long    string
	boolean bool
	set     func(o *P2POptions, v string) error
	help    string
}

var p2pFlags = []p2pFlag{
	{long: "time", set: p2pDuration(func(o *P2POptions) *time.Duration { return &o.Time }), help: "how long rank 0 sends (default 10s)"},
	{long: "interval", set: p2pDuration(func(o *P2POptions) *time.Duration { return &o.Interval }), help: "report every this long (default 1s)"},
	{long: "size", set: p2pSize(func(o *P2POptions) *int64 { return &o.MsgBytes }), help: "bytes per message, with K, M or G (default 4M)"},
	{long: "window", set: p2pSize(func(o *P2POptions) *int64 { return &o.Window }), help: "bytes of messages in flight, a multiple of --size (default 16M)"},
	{long: "transport", set: func(o *P2POptions, v string) error { o.Transport = v; return nil }, help: "metaroce, tcp, mptcp, shm or auto (default metaroce; under a launcher, the launcher's)"},
	{long: "in-process", boolean: true, set: p2pBool(func(o *P2POptions) *bool { return &o.InProcess }), help: "run both ranks as goroutines of this process"},
	{long: "json", boolean: true, set: p2pBool(func(o *P2POptions) *bool { return &o.JSON }), help: "one JSON object per interval and one for the run"},
	{long: "timeout", set: p2pDuration(func(o *P2POptions) *time.Duration { return &o.Timeout }), help: "bound on set-up and on each message (default 1m)"},
	{long: "help", boolean: true, set: func(*P2POptions, string) error { return ErrHelp }, help: "print this help"},
}

// ParseP2PArgs reads a gocoll bench p2p command line (after "p2p"): flags
// as "--time 10s" or "--time=10s" ("-h" for help). It returns the
// validated options, ErrHelp, or an error that fits on one line.
func ParseP2PArgs(args []string) (P2POptions, error) {
	o := DefaultP2POptions()
	if len(args) > ArgsMax {
		return o, fmt.Errorf("%d arguments (at most %d)", len(args), ArgsMax)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-h" {
			return o, ErrHelp
		}
		if !strings.HasPrefix(a, "-") {
			return o, fmt.Errorf("p2p takes no argument %s (only flags; see -h)", quoteArg(a))
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := lookupP2PFlag(name)
		if f == nil {
			return o, fmt.Errorf("unknown flag %s (see -h)", quoteArg(a))
		}
		if !f.boolean && !hasValue {
			if i+1 >= len(args) {
				return o, fmt.Errorf("flag --%s needs a value", f.long)
			}
			i++
			value = args[i]
		}
		if err := f.set(&o, value); err != nil {
			if errors.Is(err, ErrHelp) {
				return o, err
			}
			return o, fmt.Errorf("flag --%s: %w", f.long, err)
		}
	}
	return o, o.validate()
}

func lookupP2PFlag(name string) *p2pFlag {
	for i := range p2pFlags {
		if p2pFlags[i].long == name {
			return &p2pFlags[i]
		}
	}
	return nil
}

// validate checks the options against their limits.
func (o *P2POptions) validate() error {
	switch {
	case o.Time <= 0 || o.Time > P2PTimeMax:
		return fmt.Errorf("--time %v out of range (0, %v]", o.Time, P2PTimeMax)
	case o.Interval < P2PIntervalMin || o.Interval > o.Time:
		return fmt.Errorf("--interval %v out of range [%v, --time %v]", o.Interval, P2PIntervalMin, o.Time)
	case o.MsgBytes < P2PMsgMin || o.MsgBytes > P2PMsgMax:
		return fmt.Errorf("--size %d out of range [%d, %d]", o.MsgBytes, P2PMsgMin, int64(P2PMsgMax))
	case o.Window < o.MsgBytes || o.Window%o.MsgBytes != 0:
		return fmt.Errorf("--window %d must be a multiple of --size %d", o.Window, o.MsgBytes)
	case o.Window > P2PWindowMaxLen:
		return fmt.Errorf("--window %d above %d bytes", o.Window, int64(P2PWindowMaxLen))
	case o.Window/o.MsgBytes > P2PInFlightMax:
		return fmt.Errorf("--window %d holds %d messages of --size %d (at most %d)", o.Window, o.Window/o.MsgBytes, o.MsgBytes, P2PInFlightMax)
	case o.Timeout <= 0:
		return fmt.Errorf("--timeout %v must be positive", o.Timeout)
	}
	switch o.Transport {
	case "", "auto", "shm", "metaroce", "tcp", "mptcp":
	default:
		return fmt.Errorf("unknown transport %s (want metaroce, tcp, mptcp, shm or auto)", quoteArg(o.Transport))
	}
	return nil
}

// inFlight is the number of messages in flight.
func (o *P2POptions) inFlight() int { return int(o.Window / o.MsgBytes) }

func p2pDuration(field func(*P2POptions) *time.Duration) func(*P2POptions, string) error {
	return func(o *P2POptions, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%s is not a duration such as 500ms or 10s", quoteArg(v))
		}
		*field(o) = d
		return nil
	}
}

func p2pSize(field func(*P2POptions) *int64) func(*P2POptions, string) error {
	return func(o *P2POptions, v string) error {
		n, err := ParseSize(v)
		*field(o) = n
		return err
	}
}

func p2pBool(field func(*P2POptions) *bool) func(*P2POptions, string) error {
	return func(o *P2POptions, v string) error {
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

// writeP2PUsage prints the help of gocoll bench p2p.
func writeP2PUsage(w io.Writer) {
	fmt.Fprint(w, `usage: gocoll bench p2p [flags]

One connection: rank 0 sends to rank 1 for --time, keeping --window bytes
of --size messages in flight, and reports every --interval the goodput
and, per path (MetaRoCE), bytes, share, resends, smoothed RTT, window,
the rate it allows, and state. Alone it starts 2 ranks on this host;
under a launcher (gocoll run, mpirun, srun) ranks 0 and 1 of the job
take part and any others wait.
Flags:
`)
	for _, f := range p2pFlags {
		arg := " VALUE"
		if f.boolean {
			arg = ""
		}
		fmt.Fprintf(w, "  %-22s %s\n", "--"+f.long+arg, f.help)
	}
	fmt.Fprint(w, "\nExit status: 0 done, 1 a failed run, 2 bad flags.\n")
}
