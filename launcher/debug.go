package launcher

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gocoll/gocoll/collective"
)

// Subsys is a set of debug subsystems (GOCOLL_DEBUG_SUBSYS, as
// NCCL_DEBUG_SUBSYS): which of GOCOLL_DEBUG's lines below a warning a rank
// prints. Warnings and errors print whatever it holds.
type Subsys uint8

// The debug subsystems.
const (
	// SubsysInit: the world's forming: its size, store and transport,
	// each peer's transport, chunk sizes, kernels, GOMAXPROCS changes.
	SubsysInit Subsys = 1 << iota
	// SubsysNet: the transports' own lines, and at close the traffic per
	// peer and per MetaRoCE path.
	SubsysNet
	// SubsysColl: one line per collective operation as it ends: its
	// kind, algorithm, size, root and time.
	SubsysColl

	// SubsysAll is every subsystem.
	SubsysAll = SubsysInit | SubsysNet | SubsysColl
	// DefaultSubsys is the set when GOCOLL_DEBUG_SUBSYS is unset: all but
	// COLL, which prints a line per operation (NCCL's default also leaves
	// COLL out).
	DefaultSubsys = SubsysInit | SubsysNet
)

var subsysNames = []struct {
	name string
	s    Subsys
}{{"INIT", SubsysInit}, {"NET", SubsysNet}, {"COLL", SubsysColl}, {"ALL", SubsysAll}}

// ParseSubsys reads GOCOLL_DEBUG_SUBSYS: a comma-separated list of INIT,
// NET, COLL and ALL, in any case; a leading ^ means every subsystem but
// those listed, as NCCL_DEBUG_SUBSYS. "" is DefaultSubsys.
func ParseSubsys(v string) (Subsys, error) {
	if strings.TrimSpace(v) == "" {
		return DefaultSubsys, nil
	}
	list, except := strings.CutPrefix(strings.TrimSpace(v), "^")
	var set Subsys
	for part := range strings.SplitSeq(list, ",") {
		name := strings.ToUpper(strings.TrimSpace(part))
		found := false
		for _, n := range subsysNames {
			if n.name == name {
				set, found = set|n.s, true
			}
		}
		if !found {
			return 0, fmt.Errorf("gocoll: %s=%q: unknown subsystem %q (want a comma-separated list of INIT, NET, COLL or ALL, ^ first to exclude)", EnvDebugSubsys, v, part)
		}
	}
	if except {
		set = SubsysAll &^ set
	}
	return set, nil
}

// String lists the set's names: "INIT,COLL"; "" for none.
func (s Subsys) String() string {
	var names []string
	for _, n := range subsysNames[:3] {
		if s&n.s != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// subsysHandler passes a record below slog.LevelWarn only if its
// subsystem is on.
type subsysHandler struct {
	slog.Handler
	on bool
}

func (h subsysHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return (h.on || l >= slog.LevelWarn) && h.Handler.Enabled(ctx, l)
}

func (h subsysHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return subsysHandler{h.Handler.WithAttrs(as), h.on}
}

func (h subsysHandler) WithGroup(name string) slog.Handler {
	return subsysHandler{h.Handler.WithGroup(name), h.on}
}

// subsysLogger is base's logger for subsystem s of job's.
func subsysLogger(base *slog.Logger, job Job, s Subsys) *slog.Logger {
	return slog.New(subsysHandler{base.Handler(), job.DebugSubsys&s != 0})
}

// logCollectives has comm's every operation print one line as it ends
// (SubsysColl at info): kind, algorithm, bytes, root, time and state.
func logCollectives(comm *collective.Comm, log *slog.Logger) {
	if !log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	comm.OnOpEnd(func(r collective.OpRecord) {
		attrs := []any{"comm", r.Comm, "seq", r.Seq, "op", r.Kind, "algo", r.Algo, "bytes", r.Bytes}
		if r.Root >= 0 {
			attrs = append(attrs, "root", r.Root)
		}
		attrs = append(attrs, "took", r.End.Sub(r.Start).Round(time.Microsecond))
		if r.State == collective.OpFailed {
			attrs = append(attrs, "err", r.Err)
		}
		log.Info("gocoll: coll", attrs...)
	})
}

// baseLog is the rank's logger before any subsystem's gate.
func (lc *lifecycle) baseLog() *slog.Logger {
	h := lc.transportLog.Handler()
	if sh, ok := h.(subsysHandler); ok {
		h = sh.Handler
	}
	return slog.New(h)
}
