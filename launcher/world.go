package launcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher/store"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
)

// worldCommID is the id of the world communicator on every rank.
const worldCommID = 1

// Options adjust Init. The zero value reads the process environment and
// gives the world communicator collective's default configuration.
type Options struct {
	// Comm configures the world communicator; it must be equal on every rank.
	Comm collective.Config
	// Environ, if not nil, replaces the process environment (KEY=value
	// entries): for ranks that are goroutines of one process, and tests.
	Environ []string
}

// World is this process's membership of a gocoll job: the world
// communicator (embedded, so its methods, Rank, Size, Barrier, Split and
// Close, are World's), and where every rank runs. Close (the
// communicator's) also leaves the job: see [Join].
type World struct {
	*collective.Comm
	job  Job
	topo topology.Topology
	life *lifecycle
}

// Init joins the job this process was started in and returns its world.
// It reads the launcher's variables (see [ParseEnv] and the package doc),
// meets the other ranks at the rendezvous store, and connects the
// transport; see [Join]. It fails with a one-line error that says what is
// wrong: no launcher variables, a bad variable, a store that cannot be
// reached or refuses the job key, ranks that did not arrive within
// GOCOLL_CONNECT_TIMEOUT, or a rank that left before the world formed
// (see [ErrRankLeft]).
func Init(ctx context.Context, opts Options) (*World, error) {
	var job Job
	var err error
	if opts.Environ != nil {
		job, err = ParseEnv(LookupIn(opts.Environ))
	} else {
		job, err = ReadEnv()
	}
	if err != nil {
		return nil, err
	}
	return Join(ctx, job, opts.Comm)
}

// Join forms the world of job: the serving rank starts the store, every
// rank dials it, claims its rank, starts heartbeating, publishes where it
// runs and its transport address, waits for every other rank's, and
// connects the transport to all of them. ctx and job.ConnectTimeout bound
// all of this. A rank whose Join fails leaves a note in the store, and
// the ranks still forming the world then fail at once with an error
// naming it (wrapping [ErrRankLeft]); one that ran out of time (ctx's
// deadline or job.ConnectTimeout) leaves none, but for rank 0 serving the
// store, whose note says what it missed (setupwatch.go). Where this
// rank's host runs more ranks than the processors the rank may run on,
// Join's last step holds the rank's goroutine on its P for 20 ms without
// using a processor (monitorHold: the Go runtime's monitor thread backs off
// before the first call instead of waking every 20-70 us through it), or
// until ctx ends.
//
// Afterwards each rank heartbeats to the store every HeartbeatTimeout/10
// and watches the others' heartbeats; a rank silent for HeartbeatTimeout is
// declared dead, and every pending and later operation with it fails with
// a *transport.PeerError naming it and wrapping [ErrNoHeartbeat].
//
// Close of the world communicator leaves the job, as MPI_Finalize does:
// the rank says goodbye in the store, stops heartbeating, waits (at most
// HeartbeatTimeout) until every other rank has said goodbye or been
// declared dead, and only then closes its transport, so that no rank takes
// its connections away while a peer may still be reading from them. The
// rank that serves the store closes it last.
func Join(ctx context.Context, job Job, cfg collective.Config) (*World, error) {
	start := time.Now()
	if job.WatchStdin {
		watchStdin(job.Rank)
	}
	base := newLogger(job)
	lc := &lifecycle{job: job, log: subsysLogger(base, job, SubsysInit).With("rank", job.Rank), transportLog: subsysLogger(base, job, SubsysNet)}
	if err := bindSelf(job, lc.log); err != nil {
		return nil, fmt.Errorf("gocoll: rank %d of %d (%s): %w", job.Rank, job.Size, job.Launcher, err)
	}
	ctx, cancel := context.WithTimeout(ctx, job.ConnectTimeout)
	defer cancel()
	ctx, leave := context.WithCancelCause(ctx)
	defer leave(nil)
	w, err := lc.form(ctx, leave, cfg)
	lc.stopSetUpWatch()
	if err != nil {
		note := err
		if left := setUpLeft(ctx); left != nil {
			// The step's own error would only say its context ended; and
			// the others see that rank leave as this one did.
			err, note = left, nil
		} else if errors.Is(err, context.DeadlineExceeded) || errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			// It gave up waiting: no fault of its own to blame it for
			// (setupwatch.go); the others name what they miss. (The
			// store's answer to a wait can say the deadline passed
			// before ctx's own timer does.)
			note = nil
			if job.ServeStore {
				// But its store goes with it, and the others would see
				// only that: it tells them what it missed.
				note = fmt.Errorf("it serves the store, and gave up forming the world: %w", err)
			}
		} else if job.StoreAtRank0 && !job.ServeStore && errors.Is(err, store.ErrClosed) {
			// Rank 0 ended before it could tell, or its note was cut off.
			err = &transport.PeerError{Rank: 0, Err: fmt.Errorf("the store it serves at %s went away before the world formed: %w", job.Store, err)}
		}
		lc.abandon(note)
		return nil, fmt.Errorf("gocoll: rank %d of %d (%s): %w", job.Rank, job.Size, job.Launcher, err)
	}
	lc.log.Info("gocoll: world formed", "size", job.Size, "store", job.Store,
		"transport", job.Transport, "took", time.Since(start).Round(time.Microsecond))
	logTransports(lc.log, w.Stats(), w.Config(), w.BoardSlotBytes())
	return w, nil
}

func newLogger(job Job) *slog.Logger {
	if !job.Logging {
		return slog.New(slog.DiscardHandler)
	}
	h := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: job.LogLevel})
	return slog.New(h)
}

// form runs the steps of Join; on error the caller abandons lc. Once
// this rank has claimed its number, ranks that leave end ctx through
// leave (setupwatch.go).
func (lc *lifecycle) form(ctx context.Context, leave context.CancelCauseFunc, cfg collective.Config) (*World, error) {
	job := lc.job
	if err := lc.openStore(ctx); err != nil {
		return nil, err
	}
	if err := lc.claimRank(ctx); err != nil {
		return nil, err
	}
	lc.claimed = true
	lc.watchSetUp(leave)
	lc.startHeartbeat()
	mine, ln, err := lc.listen(ctx)
	if err != nil {
		return nil, err
	}
	lc.ln = ln
	mine.Probe = job.Probe.String()
	if job.Rank == 0 {
		var bad error
		if mine.Links, bad = givenLinks(job); bad != nil {
			// Published, so that every rank fails with it (checkRecords).
			mine.Links, mine.Fail = nil, strings.ReplaceAll(bad.Error(), "\n", "; ")
		}
		mine.Dump = job.TopoDump != ""
	}
	rec, err := encodeRecord(mine)
	if err != nil {
		return nil, err
	}
	values, err := store.AllGather(ctx, lc.kv, job.Rank, job.Size, "world", rec)
	if err != nil {
		if ferr := mine.failure(job.Rank); ferr != nil {
			return nil, ferr // its own failure, though the others did not all come
		}
		return nil, fmt.Errorf("waiting for the other ranks at the store %s: %w", job.Store, err)
	}
	addrs, topo, err := checkRecords(mine, values)
	if err != nil {
		return nil, err
	}
	lc.topo = topo
	if job.FitGoMaxProcs {
		fitGoMaxProcs(topo, job.Rank, lc.log)
	}
	ep, err := ln.Connect(ctx, addrs)
	lc.ln = nil // Connect closed it
	if err != nil {
		return nil, fmt.Errorf("connecting the %s transport: %w", job.Transport, err)
	}
	if c, ok := ln.(interface{ chosen() string }); ok {
		job.Transport = c.chosen() // auto: the transport it picked
	}
	lc.guard = newGuardedEndpoint(ep)
	lc.guard.notes = lc
	rec0, err := decodeRecord(0, values[0]) // checked by checkRecords
	if err != nil {
		return nil, err
	}
	if err := lc.settleLinks(ctx, cfg, &topo, rec0.Links, rec0.Dump); err != nil { // probe.go
		return nil, err
	}
	cfg.Topology = &topo
	job.Algo.Apply(&cfg)
	cfg.Deterministic = cfg.Deterministic || job.Deterministic
	if cfg.Channels == 0 {
		cfg.Channels = job.Channels
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = job.OpTimeout
	}
	if cfg.StallTimeout == 0 {
		cfg.StallTimeout = job.StallTimeout
	}
	if cfg.OnStall == nil {
		cfg.OnStall = lc.stallHandler()
	}
	comm, err := collective.NewOwning(lc.guard, worldCommID, cfg, lc)
	if err != nil {
		return nil, err
	}
	lc.startWatch()
	lc.answerDiagnoses(comm)
	logCollectives(comm, subsysLogger(lc.baseLog(), job, SubsysColl).With("rank", job.Rank))
	settleMonitor(ctx, topo, job.Rank, lc.log) // procs.go
	return &World{Comm: comm, job: job, topo: topo, life: lc}, nil
}

// openStore serves the store if this rank should, and connects to it.
func (lc *lifecycle) openStore(ctx context.Context) error {
	job := lc.job
	if job.ServeStore {
		bind, err := bindAddr(job.Store)
		if err != nil {
			return err
		}
		// The server lives as long as the world, not as long as ctx.
		srv, err := store.Listen(context.Background(), bind, store.Config{JobKey: job.JobKey})
		if err != nil {
			return fmt.Errorf("serving the store on %s: %w (set %s=host:port to choose another port)", bind, err, EnvStore)
		}
		lc.srv, lc.client = srv, srv.Local()
	} else {
		c, err := store.Dial(ctx, job.Store, store.ClientConfig{JobKey: job.JobKey, RetryMax: 100 * time.Millisecond})
		switch {
		case errors.Is(err, store.ErrBadJobKey):
			return fmt.Errorf("the store at %s refused this job's key (%s): %w", job.Store, EnvJobKey, err)
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("no store answered at %s within %v (is rank 0 running? is %s right?): %w",
				job.Store, job.ConnectTimeout, EnvStore, err)
		case err != nil:
			return fmt.Errorf("store at %s: %w", job.Store, err)
		}
		lc.client = c
	}
	lc.kv = JobStore(lc.client, job.JobID)
	return nil
}

// bindAddr is where the serving rank listens for the store at addr: on
// loopback if addr is, else on every interface at addr's port.
func bindAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("store address %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return net.JoinHostPort(host, port), nil
	}
	return net.JoinHostPort("", port), nil
}

// claimRank makes sure no other process joined as this rank.
// claimKey is the key a rank adds 1 to when it claims its number.
func claimKey(rank int) string { return "claim/" + strconv.Itoa(rank) }

func (lc *lifecycle) claimRank(ctx context.Context) error {
	n, err := lc.kv.Add(ctx, claimKey(lc.job.Rank), 1)
	if err != nil {
		return fmt.Errorf("store at %s: %w", lc.job.Store, err)
	}
	if n != 1 {
		return fmt.Errorf("another process already joined job %q as rank %d (two ranks with the same number?)", lc.job.JobID, lc.job.Rank)
	}
	return nil
}

// listen starts this rank's transport and returns the record to publish.
func (lc *lifecycle) listen(ctx context.Context) (rankRecord, transportListener, error) {
	job := lc.job
	host, err := topology.DetectLocal(job.Host, job.Site)
	if err != nil {
		return rankRecord{}, nil, err
	}
	host.NICs = usefulNICs(host.NICs)
	ip := job.Addr
	if ip == "" {
		if ip, err = routeToward(job.Store); err != nil {
			return rankRecord{}, nil, fmt.Errorf("finding this host's address toward the store (set %s): %w", EnvAddr, err)
		}
	}
	ln, err := listenTransport(ctx, job.Transport, transportSpec{
		Rank: job.Rank, Size: job.Size, JobID: hash64(job.JobID), Host: ip, HostName: host.Host,
		Logger: lc.transportLog, SpinWait: job.SpinWait, PeerTimeout: job.PeerTimeout, UDPProbe: job.UDPProbeTimeout,
		UDPPorts: job.UDPPorts, PathInterfaces: job.PathInterfaces, ArrivalTimes: job.ArrivalTimes, Paths: job.Paths,
		SendSamples: job.SendSamples, CoalesceWait: job.CoalesceWait,
		Exchange: func(ctx context.Context, name string, value []byte) ([][]byte, error) {
			return store.AllGather(ctx, lc.kv, job.Rank, job.Size, name, value)
		},
		Notices: job.noticesTo(), OpenSocket: job.openSocket, Auth: newTransportAuth(job),
	})
	if err != nil {
		return rankRecord{}, nil, err
	}
	rec := rankRecord{Version: recordVersion, Launcher: job.Launcher, Size: job.Size,
		Transport: job.Transport, Addr: ln.Addr(), Info: host.RankInfo(job.Rank, job.LocalRank, ip)}
	return rec, ln, nil
}

// usefulNICs keeps the interfaces that are up and have addresses, so that
// records stay small on hosts with many idle virtual interfaces.
func usefulNICs(nics []topology.NIC) []topology.NIC {
	var kept []topology.NIC
	for _, n := range nics {
		if n.Up && len(n.Addrs) > 0 {
			kept = append(kept, n)
		}
	}
	return kept
}

// routeToward returns this host's IP address on the route to hostport,
// without sending anything.
func routeToward(hostport string) (string, error) {
	c, err := net.Dial("udp", hostport)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String(), nil
}

// Topology returns where every rank runs: host, site, local rank, address,
// network interfaces and CPU, with the job's link figures (Links:
// GOCOLL_TOPO_FILE's, GOCOLL_LINKS', cached or probed as the job formed;
// what its communicators choose with), or nil Links where it has none. Ranks
// are numbered site by site when gocoll run placed them;
// [topology.RingOrder] gives the ring that crosses sites least in any case.
// The result is a copy the caller may change.
func (w *World) Topology() topology.Topology {
	t, err := topology.New(w.topo.Ranks)
	if err != nil {
		panic("launcher: the world's topology became invalid: " + err.Error())
	}
	t.Links = w.topo.Links.Clone()
	return t
}

// Site is this rank's site.
func (w *World) Site() string {
	ri, _ := w.topo.Rank(w.job.Rank)
	return ri.SiteName()
}

// Host is this rank's host name in the topology.
func (w *World) Host() string {
	ri, _ := w.topo.Rank(w.job.Rank)
	return ri.Host
}

// LocalRank is this rank's index among the ranks of its host: the
// launcher's, or if it gave none, this rank's place among them by rank.
func (w *World) LocalRank() int {
	ri, _ := w.topo.Rank(w.job.Rank)
	return ri.LocalRank
}

// Job returns what the environment said about this rank.
func (w *World) Job() Job { return w.job }

// Store returns the job's rendezvous store under a prefix of the
// application's own, for small values the ranks want to share. It is
// closed with the world.
func (w *World) Store() store.Store { return store.Prefixed(w.life.kv, "app/") }
