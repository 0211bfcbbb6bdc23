package launcher

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/gocoll/gocoll/internal/affinity"
	"github.com/gocoll/gocoll/transport/tcp"
)

// EnvBindCore asks a rank to bind itself to a core of its host as it joins
// (GOCOLL_BIND_CORE=I/N, or I/N,oversubscribe): gocoll run --bind-to core
// sets it for the ranks it starts on other hosts, whose cores only those
// hosts know (it binds the ranks of its own host at fork). See BindCore.
const EnvBindCore = "GOCOLL_BIND_CORE"

// bindOversubscribe ends a GOCOLL_BIND_CORE value that lets ranks share
// cores.
const bindOversubscribe = ",oversubscribe"

// BindCore is a rank's binding request (GOCOLL_BIND_CORE): it is the
// Index-th (from 0) of Of ranks of its host that bind to a core each. Join
// binds every thread of the process, before anything else, to the
// Index-th of the cores the process was started with (the cores in order
// of their first CPU, each with all its hardware threads:
// affinity.Pick), so the ranks of a host get distinct cores. Of above the
// cores fails the rank's Join with a one-line error unless Oversubscribe,
// which wraps around. Where GOMAXPROCS is not set, the runtime's
// GOMAXPROCS becomes the number of CPUs bound to, as for a rank started
// bound (and Job.FitGoMaxProcs then divides it). The zero value (Of 0)
// binds nothing.
type BindCore struct {
	Index, Of     int
	Oversubscribe bool
}

// String is the GOCOLL_BIND_CORE value of b: "I/N" or "I/N,oversubscribe".
func (b BindCore) String() string {
	s := strconv.Itoa(b.Index) + "/" + strconv.Itoa(b.Of)
	if b.Oversubscribe {
		s += bindOversubscribe
	}
	return s
}

// parseBindCore reads a GOCOLL_BIND_CORE value; "" is the zero BindCore.
func parseBindCore(v string) (BindCore, error) {
	if v == "" {
		return BindCore{}, nil
	}
	bad := fmt.Errorf("gocoll: %s=%q: want INDEX/RANKS (0 <= INDEX < RANKS <= %d), optionally followed by %s",
		EnvBindCore, v, tcp.MaxWorldSize, bindOversubscribe)
	var b BindCore
	v, b.Oversubscribe = strings.CutSuffix(v, bindOversubscribe)
	i, n, ok := strings.Cut(v, "/")
	if !ok {
		return BindCore{}, bad
	}
	var err1, err2 error
	b.Index, err1 = strconv.Atoi(i)
	b.Of, err2 = strconv.Atoi(n)
	if err1 != nil || err2 != nil || b.Index < 0 || b.Of > tcp.MaxWorldSize || b.Index >= b.Of {
		return BindCore{}, bad
	}
	return b, nil
}

// hostCores is the host's cores as the process found them before its
// first bind: a later bind (a second Join in the process) picks among
// them, not among the one core the first left it.
var hostCores = sync.OnceValue(affinity.Cores)

// bindSelf makes job.BindCore's binding (none for the zero value) and
// logs it on log. The binding request is taken out of the environment,
// so that a program the rank starts does not bind itself again within
// the narrowed mask it inherits.
func bindSelf(job Job, log *slog.Logger) error {
	b := job.BindCore
	if b.Of == 0 {
		return nil
	}
	os.Unsetenv(EnvBindCore)
	cpus, err := affinity.Pick(hostCores(), b.Index, b.Of, b.Oversubscribe)
	if err != nil {
		return err
	}
	if err := affinity.Bind(cpus); err != nil {
		return fmt.Errorf("--bind-to core: %v", err)
	}
	if job.FitGoMaxProcs {
		runtime.GOMAXPROCS(len(cpus))
	}
	log.Info("gocoll: bound to a core", "index", b.Index, "of", b.Of, "cpus", affinity.Format(cpus))
	return nil
}
