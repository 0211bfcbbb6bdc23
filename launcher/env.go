package launcher

import (
	"github.com/gocoll/gocoll/transport/shm"

	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/launcher/hosts"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
	"github.com/gocoll/gocoll/transport/tcp"
)

// This file is the only code of gocoll that reads environment variables
// (a test checks it). Everything else receives a Job or an explicit list.

// The variables gocoll itself defines. gocoll run sets the first group for
// every rank; any of them may also be set by hand or with mpirun -x.
const (
	EnvRank       = "GOCOLL_RANK"        // this rank, in [0, GOCOLL_WORLD_SIZE)
	EnvWorldSize  = "GOCOLL_WORLD_SIZE"  // number of ranks
	EnvLocalRank  = "GOCOLL_LOCAL_RANK"  // index among the ranks of this host
	EnvStore      = "GOCOLL_STORE"       // host:port of the rendezvous store
	EnvStoreServe = "GOCOLL_STORE_SERVE" // 1: rank 0 serves the store at GOCOLL_STORE's port; 0: it is served elsewhere
	EnvJobKey     = "GOCOLL_JOB_KEY"     // the job's secret: 16 to 1024 printable ASCII bytes, the same on every rank
	// EnvJobKeyStdin=1: the job key is the first line of stdin (gocoll
	// run's remote ranks, so that it is on no command line).
	EnvJobKeyStdin = "GOCOLL_JOB_KEY_STDIN"
	// EnvInsecure=1 runs a job without GOCOLL_JOB_KEY under a well-known
	// key that keeps no one out: for a single host only (the store must be
	// on loopback).
	EnvInsecure   = "GOCOLL_INSECURE"
	EnvJobID      = "GOCOLL_JOB_ID"      // names the job (keys, derived port, transport handshake)
	EnvSite       = "GOCOLL_SITE"        // this rank's site
	EnvHost       = "GOCOLL_HOST"        // this rank's host name in the topology (default: the kernel's)
	EnvAddr       = "GOCOLL_ADDR"        // the IP address the transport listens on (default: the route to the store)
	EnvWatchStdin = "GOCOLL_WATCH_STDIN" // 1: end the process when stdin closes (the launcher went away)

	EnvTransport        = "GOCOLL_TRANSPORT"         // auto (default: shm within a host, metaroce between hosts), shm+tcp, tcp, metaroce, shm
	EnvDebug            = "GOCOLL_DEBUG"             // info or trace: log to stderr at that level
	EnvDebugSubsys      = "GOCOLL_DEBUG_SUBSYS"      // which of GOCOLL_DEBUG's lines: INIT,NET,COLL or ALL; ^ excludes (default INIT,NET)
	EnvHeartbeatTimeout = "GOCOLL_HEARTBEAT_TIMEOUT" // a rank silent this long is declared dead
	EnvConnectTimeout   = "GOCOLL_CONNECT_TIMEOUT"   // bound on forming the world
	EnvSpinWait         = "GOCOLL_SPIN_WAIT"         // shm (its board waits too), metaroce: how long a wait polls before it sleeps; 0 never
	EnvPeerTimeout      = "GOCOLL_PEER_TIMEOUT"      // metaroce: a peer silent on every path this long fails what waits on it
	EnvUDPProbeTimeout  = "GOCOLL_UDP_PROBE_TIMEOUT" // metaroce: a pair whose handshake takes longer is blocked (auto: TCP)
	EnvUDPPorts         = "GOCOLL_UDP_PORTS"         // metaroce: the UDP ports the path sockets bind, like 50000-50999
	EnvPathIfaces       = "GOCOLL_PATH_IFACES"       // metaroce: each path's interface or local IP, like eth0,eth1
	EnvAuth             = "GOCOLL_AUTH"              // header (default: a keyed tag over each packet's and frame's header) or full (over the payload too)
	EnvEncrypt          = "GOCOLL_ENCRYPT"           // off (default), sites (AES-GCM between sites) or all (everywhere)
	EnvAlgo             = "GOCOLL_ALGO"              // forced algorithms, like tree or allreduce:hierarchical,broadcast:chain
	EnvDeterministic    = "GOCOLL_DETERMINISTIC"     // 1: AllReduce in one canonical order (collective.Config.Deterministic)
	EnvChannels         = "GOCOLL_CHANNELS"          // ring AllReduce and tree channels, 1 to collective.ChannelsMax (collective.Config.Channels)
	EnvProbe            = "GOCOLL_PROBE"             // unset: measure the links per level as the world forms where the job spans hosts; 0 never; 1 always
	EnvLinks            = "GOCOLL_LINKS"             // link figures per level, like wan=2ms@1e8,site=25us@1.25e9 (gocoll run's cache for a restarted round)
	EnvTopoFile         = "GOCOLL_TOPO_FILE"         // a topology file (version 2) whose link figures the job takes; rank 0 reads it
	EnvTopoDump         = "GOCOLL_TOPO_DUMP"         // rank 0 writes the job's topology with its link figures there, as a version 2 file
	EnvTimeout          = "GOCOLL_TIMEOUT"           // bound on each collective operation (collective.Config.Timeout)
	EnvStallTimeout     = "GOCOLL_STALL_TIMEOUT"     // an operation running this long is reported as stalled (collective.Config.StallTimeout)
	// EnvGoMaxProcs is the Go runtime's own variable; when it is set, Join
	// leaves the runtime's GOMAXPROCS alone (see Job.FitGoMaxProcs).
	EnvGoMaxProcs = "GOMAXPROCS"
)

// Defaults and limits of the durations a Job carries.
const (
	DefaultHeartbeatTimeout = 30 * time.Second
	DefaultConnectTimeout   = 120 * time.Second
	MinHeartbeatTimeout     = 100 * time.Millisecond
	// DefaultPeerTimeout is Job.PeerTimeout when GOCOLL_PEER_TIMEOUT is
	// unset; MinPeerTimeout and MaxPeerTimeout bound it.
	DefaultPeerTimeout = 2 * time.Second
	MinPeerTimeout     = 100 * time.Millisecond
	MaxPeerTimeout     = time.Hour
	// DefaultUDPProbeTimeout is Job.UDPProbeTimeout when
	// GOCOLL_UDP_PROBE_TIMEOUT is unset; MinUDPProbeTimeout and
	// MaxUDPProbeTimeout bound it.
	DefaultUDPProbeTimeout = 5 * time.Second
	MinUDPProbeTimeout     = 100 * time.Millisecond
	MaxUDPProbeTimeout     = 10 * time.Minute
	MaxTimeout             = 24 * time.Hour
	// MaxJobIDBytes bounds a job id (it prefixes store keys).
	MaxJobIDBytes = 128
	// MinJobKeyBytes and MaxJobKeyBytes bound a job key (jobkey.MinLen,
	// jobkey.MaxLen).
	MinJobKeyBytes = jobkey.MinLen
	MaxJobKeyBytes = jobkey.MaxLen
)

// Launcher names, as Job.Launcher reports them.
const (
	LauncherGocoll   = "gocoll"
	LauncherOpenMPI  = "openmpi"
	LauncherSlurm    = "slurm"
	LauncherTorchrun = "torchrun"
)

// Transport names accepted in GOCOLL_TRANSPORT.
const (
	TransportTCP      = "tcp"
	TransportMetaRoCE = "metaroce"
	// TransportSHM is shared memory (package transport/shm): every rank of
	// the job must run on this host.
	TransportSHM = "shm"
	// TransportAuto is shared memory between the ranks of one host and
	// MetaRoCE between hosts (DefaultTransport): a World's Job then names
	// TransportSHM, TransportMetaRoCE, or TransportSHMMetaRoCE for the two
	// together.
	TransportAuto = "auto"
	// TransportSHMMetaRoCE is what auto picks for a job of several hosts
	// with several ranks on some; also accepted in GOCOLL_TRANSPORT.
	TransportSHMMetaRoCE = "shm+metaroce"
	// TransportSHMTCP is shared memory between the ranks of one host and
	// TCP between hosts.
	TransportSHMTCP = "shm+tcp"
)

// Job is what a rank learns from its environment: who it is, where the
// store is, and how to behave. [ParseEnv] builds it.
type Job struct {
	Launcher  string // one of the Launcher* names: whose variables were read
	Rank      int    // in [0, Size)
	Size      int    // in [1, tcp.MaxWorldSize]
	LocalRank int    // index among the ranks of this host; -1: not given, number them by rank

	Host string // host name for the topology; empty: the kernel's hostname
	Site string // empty: topology.DefaultSite
	Addr string // IP the transport listens on; empty: the route toward the store

	Store        string // host:port of the store
	StoreAtRank0 bool   // rank 0 serves the store (else the launcher or another process does)
	ServeStore   bool   // this rank serves the store: StoreAtRank0 and Rank 0
	JobID        string // 1 to MaxJobIDBytes bytes
	// JobKey is the job's secret (GOCOLL_JOB_KEY), or jobkey.Insecure()
	// under GOCOLL_INSECURE=1; never the zero Key. It prints redacted.
	JobKey jobkey.Key

	Transport        string        // one of the Transport* names; in a World's Job, the one in use (never auto; "+tcp" added where UDP is blocked)
	LogLevel         slog.Level    // meaningful if Logging
	Logging          bool          // GOCOLL_DEBUG was set
	DebugSubsys      Subsys        // GOCOLL_DEBUG_SUBSYS: the subsystems whose lines below a warning print
	HeartbeatTimeout time.Duration // in [MinHeartbeatTimeout, MaxTimeout]
	// PeerTimeout is how long a MetaRoCE peer may stay silent on every
	// path while an operation waits on it before that operation fails
	// naming it (metaroce.Config.PeerTimeout); in [MinPeerTimeout,
	// MaxPeerTimeout], DefaultPeerTimeout unless GOCOLL_PEER_TIMEOUT is set.
	PeerTimeout time.Duration
	// UDPProbeTimeout bounds MetaRoCE's first handshake with every peer:
	// a pair of ranks that does not complete it in time has UDP blocked
	// between them, and then uses TCP (auto) or fails the job (metaroce);
	// in [MinUDPProbeTimeout, MaxUDPProbeTimeout], DefaultUDPProbeTimeout
	// unless GOCOLL_UDP_PROBE_TIMEOUT is set.
	UDPProbeTimeout time.Duration
	// UDPPorts is the range of UDP ports MetaRoCE's path sockets bind
	// (mrtransport.Config.PortRange; GOCOLL_UDP_PORTS=50000-50999), at
	// least mrtransport.DefaultPaths ports; zero: ephemeral ports.
	UDPPorts mrtransport.PortRange
	// PathInterfaces chooses each MetaRoCE path's interface or local IP
	// address, path i taking entry i mod len (mrtransport.Config.Interfaces;
	// GOCOLL_PATH_IFACES=eth0,eth1); empty: every path binds the rank's
	// address (GOCOLL_ADDR or the route toward the store).
	PathInterfaces []string
	// AuthFull tags the payload of every MetaRoCE datagram and TCP frame
	// too, not only its header (GOCOLL_AUTH=full; default header).
	// Encrypt is where the transports encrypt with AES-GCM: "" (off, the
	// default), EncryptSites (between ranks of different sites) or
	// EncryptAll (GOCOLL_ENCRYPT). Both need a job key (not
	// GOCOLL_INSECURE=1).
	AuthFull bool
	Encrypt  string
	// SpinWait is how long a wait on shared memory or MetaRoCE polls,
	// yielding the processor, before it sleeps (shm.Config.SpinWait,
	// mrtransport.Config.SpinWait): 0 means their defaults (200 us and 50 us;
	// a wait on a collective's shared-memory board, 1 ms), negative never
	// (GOCOLL_SPIN_WAIT=0); at most shm.MaxSpinWait. Set, it bounds the
	// board's waits too (shm.Config.BoardSpinWait's default).
	SpinWait time.Duration
	// Algo forces the world communicator's algorithms where the Config
	// given to Join leaves them auto (GOCOLL_ALGO, collective.ParseAlgoSpec's
	// form); every rank must set it alike (the operation headers check).
	Algo collective.AlgoSpec
	// Deterministic (GOCOLL_DETERMINISTIC=1) sets the world communicator's
	// Config.Deterministic: AllReduce bits independent of the algorithm.
	Deterministic bool
	// Channels (GOCOLL_CHANNELS) sets the world communicator's
	// Config.Channels where the Config given to Join leaves it 0.
	Channels int
	// Probe (GOCOLL_PROBE) says when Join measures each level's links
	// for the cost model's choice (probe.go, collective/tune/probe).
	Probe ProbeMode
	// Links (GOCOLL_LINKS) are link figures per level the job takes as
	// measured (gocoll run gives a restarted round those of the first);
	// rank 0's count.
	Links topology.Links
	// TopoFile (GOCOLL_TOPO_FILE) is a topology file whose link figures
	// (levels and pairs of hosts) the job takes; rank 0 reads it.
	TopoFile string
	// TopoDump (GOCOLL_TOPO_DUMP): rank 0 writes the job's topology, with
	// the link figures the cost model uses, there as a version 2 file.
	TopoDump       string
	ConnectTimeout time.Duration // in (0, MaxTimeout]
	WatchStdin     bool
	BindCore       BindCore // GOCOLL_BIND_CORE: the core Join binds the process to; zero: none
	// OpTimeout and StallTimeout are the world communicator's
	// Config.Timeout and Config.StallTimeout where the Config given to
	// Join leaves them zero (GOCOLL_TIMEOUT, GOCOLL_STALL_TIMEOUT); in
	// [1ms, MaxTimeout], zero (the collective package's defaults: 10 min
	// and 30 s) if unset.
	OpTimeout, StallTimeout time.Duration
	// FitGoMaxProcs (GOMAXPROCS not set) lets Join divide the processors
	// the Go runtime uses among the ranks of this host: GOMAXPROCS becomes
	// its value divided by the number of local ranks, at least 1. With
	// more busy threads than cores, a rank's spare processors only add
	// thread wake-ups to every message (an 8-byte AllReduce of 4 processes
	// on 2 cores spent about 60 % fewer context switches with 1).
	FitGoMaxProcs bool

	// For tests: where a rank's notices go (nil: stderr), and MetaRoCE's
	// path sockets (nil: UDP).
	notices    io.Writer
	openSocket mrtransport.SocketOpener
}

// noticesTo is where the rank's notices go: stderr unless a test says.
func (j Job) noticesTo() io.Writer {
	if j.notices != nil {
		return j.notices
	}
	return os.Stderr
}

// LevelTrace is the slog level GOCOLL_DEBUG=trace selects.
const LevelTrace = slog.LevelDebug - 4

// errNoLauncher is the one-line advice given when no launcher's variables
// are present.
const errNoLauncher = "gocoll: no launcher environment: start the program with gocoll run, mpirun, srun or torchrun, " +
	"or set GOCOLL_RANK and GOCOLL_WORLD_SIZE (and GOCOLL_STORE=host:port when ranks run on several hosts)"

// ReadEnv reads the process environment; see ParseEnv. With
// GOCOLL_JOB_KEY_STDIN=1 and no GOCOLL_JOB_KEY, it first reads the job key
// from the first line of stdin (once per process; see readStdinKey).
func ReadEnv() (Job, error) {
	lookup := LookupFunc(os.LookupEnv)
	if v, _ := os.LookupEnv(EnvJobKeyStdin); strings.TrimSpace(v) == "1" {
		if k, _ := os.LookupEnv(EnvJobKey); strings.TrimSpace(k) == "" {
			key, err := readStdinKey()
			if err != nil {
				return Job{}, fmt.Errorf("gocoll: %s=1: %v", EnvJobKeyStdin, err)
			}
			lookup = withJobKey(lookup, key)
		}
	}
	return ParseEnv(lookup)
}

// withJobKey returns lookup with GOCOLL_JOB_KEY set to key.
func withJobKey(lookup LookupFunc, key string) LookupFunc {
	return func(name string) (string, bool) {
		if name == EnvJobKey {
			return key, true
		}
		return lookup(name)
	}
}

// Environ returns the process environment (KEY=value entries), which gocoll
// run passes on to the ranks it starts.
func Environ() []string { return os.Environ() }

// LookupFunc is os.LookupEnv's signature.
type LookupFunc func(name string) (string, bool)

// LookupIn returns a LookupFunc over KEY=value entries; a later entry for
// a key wins, as in os/exec.
func LookupIn(environ []string) LookupFunc {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// ParseEnv builds a Job from the variables of the first launcher whose
// variables are present, in this order: gocoll (GOCOLL_RANK), Open MPI
// (OMPI_COMM_WORLD_RANK), torchrun (RANK and WORLD_SIZE), Slurm
// (SLURM_PROCID). The gocoll variables other than rank, size and local rank
// apply under every launcher. Where no GOCOLL_STORE is given, rank 0 serves
// the store on a port derived from the job id, on loopback when the job has
// one host; see the package doc for each launcher's rules. ParseEnv returns
// a one-line error naming the variable at fault, or saying what to set.
func ParseEnv(lookup LookupFunc) (Job, error) {
	e := envReader{lookup: lookup}
	var j Job
	var err error
	switch {
	case e.has(EnvRank):
		j, err = e.gocollJob()
	case e.has("OMPI_COMM_WORLD_RANK"):
		j, err = e.openMPIJob()
	case e.has("RANK") && e.has("WORLD_SIZE"):
		j, err = e.torchrunJob()
	case e.has("SLURM_PROCID"):
		j, err = e.slurmJob()
	default:
		return Job{}, fmt.Errorf("%s", errNoLauncher)
	}
	if err != nil {
		return Job{}, err
	}
	if err := e.common(&j); err != nil {
		return Job{}, err
	}
	return j, nil
}

// envReader reads and checks variables, remembering the first error.
type envReader struct {
	lookup LookupFunc
}

func (e envReader) get(name string) string {
	v, _ := e.lookup(name)
	return strings.TrimSpace(v)
}

func (e envReader) has(name string) bool { return e.get(name) != "" }

// int reads a required integer in [lo, hi].
func (e envReader) int(name string, lo, hi int) (int, error) {
	v := e.get(name)
	if v == "" {
		return 0, fmt.Errorf("gocoll: %s is not set", name)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("gocoll: %s=%q is not a whole number from %d to %d", name, v, lo, hi)
	}
	return n, nil
}

// optInt reads an optional integer in [lo, hi], def if unset.
func (e envReader) optInt(name string, lo, hi, def int) (int, error) {
	if !e.has(name) {
		return def, nil
	}
	return e.int(name, lo, hi)
}

// rankSize reads a rank and a world size, and checks rank < size.
func (e envReader) rankSize(rankVar, sizeVar string) (rank, size int, err error) {
	if size, err = e.int(sizeVar, 1, tcp.MaxWorldSize); err != nil {
		return 0, 0, err
	}
	if rank, err = e.int(rankVar, 0, tcp.MaxWorldSize-1); err != nil {
		return 0, 0, err
	}
	if rank >= size {
		return 0, 0, fmt.Errorf("gocoll: %s=%d is not below %s=%d", rankVar, rank, sizeVar, size)
	}
	return rank, size, nil
}

func (e envReader) gocollJob() (Job, error) {
	j := Job{Launcher: LauncherGocoll}
	var err error
	if j.Rank, j.Size, err = e.rankSize(EnvRank, EnvWorldSize); err != nil {
		return j, err
	}
	if j.LocalRank, err = e.optInt(EnvLocalRank, 0, tcp.MaxWorldSize-1, -1); err != nil {
		return j, err
	}
	j.JobID = e.get(EnvJobID)
	if j.JobID == "" && e.has(EnvJobKey) {
		key, err := e.jobKey()
		if err != nil {
			return j, err
		}
		j.JobID = "k" + hex.EncodeToString(key.Derive(jobIDPurpose)[:8]) // tells nothing of the key
	}
	if j.JobID == "" {
		j.JobID = "gocoll"
	}
	j.Store = loopbackStore(j.JobID)
	return j, nil
}

func (e envReader) openMPIJob() (Job, error) {
	j := Job{Launcher: LauncherOpenMPI}
	var err error
	if j.Rank, j.Size, err = e.rankSize("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"); err != nil {
		return j, err
	}
	if j.LocalRank, err = e.optInt("OMPI_COMM_WORLD_LOCAL_RANK", 0, tcp.MaxWorldSize-1, -1); err != nil {
		return j, err
	}
	j.JobID = "ompi-" + firstSet(e, "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "OMPI_MCA_orte_ess_jobid")
	localSize, err := e.optInt("OMPI_COMM_WORLD_LOCAL_SIZE", 1, tcp.MaxWorldSize, 0)
	if err != nil {
		return j, err
	}
	if localSize == j.Size || e.get("OMPI_MCA_orte_num_nodes") == "1" {
		j.Store = loopbackStore(j.JobID)
	} else if !e.has(EnvStore) {
		return j, fmt.Errorf("gocoll: an Open MPI job on several hosts needs %s=<rank 0's host>:<port> (mpirun -x %s=...)", EnvStore, EnvStore)
	}
	return j, nil
}

func (e envReader) torchrunJob() (Job, error) {
	j := Job{Launcher: LauncherTorchrun}
	var err error
	if j.Rank, j.Size, err = e.rankSize("RANK", "WORLD_SIZE"); err != nil {
		return j, err
	}
	if j.LocalRank, err = e.optInt("LOCAL_RANK", 0, tcp.MaxWorldSize-1, -1); err != nil {
		return j, err
	}
	addr, port := e.get("MASTER_ADDR"), e.get("MASTER_PORT")
	j.JobID = "torch-" + firstSet(e, "TORCHELASTIC_RUN_ID")
	if j.JobID == "torch-" {
		j.JobID = "torch-" + addr + ":" + port
	}
	switch {
	case addr == "" || port == "":
		if !e.has(EnvStore) {
			return j, fmt.Errorf("gocoll: torchrun variables without MASTER_ADDR and MASTER_PORT: set them, or %s=host:port", EnvStore)
		}
	case strings.EqualFold(e.get("TORCHELASTIC_USE_AGENT_STORE"), "true"):
		// torchrun's agent holds MASTER_PORT with its own store.
		j.Store = net.JoinHostPort(addr, strconv.Itoa(DerivedPort(j.JobID)))
	default:
		if _, err := e.int("MASTER_PORT", 1, 65535); err != nil {
			return j, err
		}
		j.Store = net.JoinHostPort(addr, port)
	}
	return j, nil
}

func (e envReader) slurmJob() (Job, error) {
	j := Job{Launcher: LauncherSlurm}
	sizeVar := "SLURM_STEP_NUM_TASKS"
	if !e.has(sizeVar) {
		sizeVar = "SLURM_NTASKS"
	}
	var err error
	if j.Rank, j.Size, err = e.rankSize("SLURM_PROCID", sizeVar); err != nil {
		return j, err
	}
	if j.LocalRank, err = e.optInt("SLURM_LOCALID", 0, tcp.MaxWorldSize-1, -1); err != nil {
		return j, err
	}
	j.Host = e.get("SLURMD_NODENAME")
	j.JobID = "slurm-" + firstSet(e, "SLURM_JOB_ID", "SLURM_JOBID") + "." + firstSet(e, "SLURM_STEP_ID", "SLURM_STEPID")
	nodes := firstSet(e, "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST")
	numNodes := firstSet(e, "SLURM_STEP_NUM_NODES", "SLURM_NNODES")
	switch {
	case numNodes == "1":
		j.Store = loopbackStore(j.JobID)
	case nodes != "":
		first, err := hosts.ExpandNodeList(nodes, 1)
		if err != nil {
			return j, fmt.Errorf("gocoll: SLURM_STEP_NODELIST: %v", err)
		}
		j.Store = net.JoinHostPort(first[0], strconv.Itoa(DerivedPort(j.JobID)))
	case !e.has(EnvStore):
		return j, fmt.Errorf("gocoll: Slurm job without SLURM_STEP_NODELIST or SLURM_JOB_NODELIST: set %s=host:port", EnvStore)
	}
	return j, nil
}

func firstSet(e envReader, names ...string) string {
	for _, n := range names {
		if v := e.get(n); v != "" {
			return v
		}
	}
	return ""
}

// common applies the variables every launcher shares.
func (e envReader) common(j *Job) error {
	if v := e.get(EnvJobID); v != "" {
		j.JobID = v
	}
	if len(j.JobID) > MaxJobIDBytes {
		return fmt.Errorf("gocoll: job id %.32q... is longer than %d bytes", j.JobID, MaxJobIDBytes)
	}
	if err := e.storeSettings(j); err != nil {
		return err
	}
	if j.Store == "" {
		return fmt.Errorf("gocoll: no store address: set %s=host:port", EnvStore)
	}
	if s := e.get(EnvHost); s != "" {
		if err := hosts.CheckHost(s); err != nil {
			return fmt.Errorf("gocoll: %s: %v", EnvHost, err)
		}
		j.Host = s
	}
	if s := e.get(EnvSite); s != "" {
		if err := hosts.CheckName("site", s); err != nil {
			return fmt.Errorf("gocoll: %s: %v", EnvSite, err)
		}
		j.Site = s
	}
	if a := e.get(EnvAddr); a != "" {
		if net.ParseIP(a) == nil {
			return fmt.Errorf("gocoll: %s=%q is not an IP address", EnvAddr, a)
		}
		j.Addr = a
	}
	var err error
	if j.WatchStdin, err = e.flag(EnvWatchStdin, false); err != nil {
		return err
	}
	if j.BindCore, err = parseBindCore(e.get(EnvBindCore)); err != nil {
		return err
	}
	if err := e.linkSettings(j); err != nil {
		return err
	}
	if j.Deterministic, err = e.flag(EnvDeterministic, false); err != nil {
		return err
	}
	if j.Channels, err = e.optInt(EnvChannels, 1, collective.ChannelsMax, 0); err != nil {
		return err
	}
	if err := e.behaviour(j); err != nil {
		return err
	}
	return e.keySettings(j)
}

// storeSettings applies GOCOLL_STORE and GOCOLL_STORE_SERVE.
func (e envReader) storeSettings(j *Job) error {
	if s := e.get(EnvStore); s != "" {
		host, port, err := net.SplitHostPort(s)
		if err != nil || host == "" {
			return fmt.Errorf("gocoll: %s=%q is not host:port", EnvStore, s)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return fmt.Errorf("gocoll: %s=%q has no valid port", EnvStore, s)
		}
		j.Store = s
	}
	serve, err := e.flag(EnvStoreServe, true)
	if err != nil {
		return err
	}
	j.StoreAtRank0 = serve
	j.ServeStore = serve && j.Rank == 0
	if strings.HasSuffix(j.Store, ":0") && (j.Size > 1 || !j.ServeStore) {
		return fmt.Errorf("gocoll: %s=%q: port 0 only works for a world of one rank that serves the store", EnvStore, j.Store)
	}
	return nil
}

// keySettings applies GOCOLL_JOB_KEY and GOCOLL_INSECURE, last, so that
// a job missing its key learns first of any other mistake.
func (e envReader) keySettings(j *Job) error {
	insecure, err := e.flag(EnvInsecure, false)
	if err != nil {
		return err
	}
	switch {
	case e.has(EnvJobKey):
		j.JobKey, err = e.jobKey()
		return err
	case insecure && !isLoopbackStore(j.Store):
		return fmt.Errorf("gocoll: %s=1 is for a single host, but the store %s is not on loopback: set %s", EnvInsecure, j.Store, EnvJobKey)
	case insecure:
		j.JobKey = jobkey.Insecure()
		return nil
	case e.get(EnvJobKeyStdin) == "1":
		return fmt.Errorf("gocoll: %s is set but no job key was read from stdin", EnvJobKeyStdin)
	}
	return fmt.Errorf("gocoll: no job key: set %s to the same secret on every rank (%d to %d printable characters; gocoll run makes one), or %s=1 to run unauthenticated on one host",
		EnvJobKey, MinJobKeyBytes, MaxJobKeyBytes, EnvInsecure)
}

// jobIDPurpose derives the job id of a job with a key but no GOCOLL_JOB_ID.
const jobIDPurpose = "gocoll/jobid/v1"

// jobKey parses GOCOLL_JOB_KEY. Its errors never show the key.
func (e envReader) jobKey() (jobkey.Key, error) {
	k, err := jobkey.Parse(e.get(EnvJobKey))
	if err != nil {
		return k, fmt.Errorf("gocoll: %s: %v", EnvJobKey, err)
	}
	return k, nil
}

// isLoopbackStore reports whether the store address host:port is on loopback.
func isLoopbackStore(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// behaviour applies the transport, logging and timeout variables.
func (e envReader) behaviour(j *Job) error {
	switch t := strings.ToLower(e.get(EnvTransport)); t {
	case "":
		j.Transport = DefaultTransport
	case TransportTCP, TransportMetaRoCE, TransportSHM, TransportAuto, TransportSHMMetaRoCE, TransportSHMTCP:
		j.Transport = t
	default:
		return fmt.Errorf("gocoll: %s=%q: want %s, %s, %s, %s (%s) or %s", EnvTransport, t,
			TransportTCP, TransportMetaRoCE, TransportSHM, TransportAuto, TransportSHMMetaRoCE, TransportSHMTCP)
	}
	switch d := strings.ToLower(e.get(EnvDebug)); d {
	case "", "0", "off":
	case "info", "1":
		j.Logging, j.LogLevel = true, slog.LevelInfo
	case "debug":
		j.Logging, j.LogLevel = true, slog.LevelDebug
	case "trace":
		j.Logging, j.LogLevel = true, LevelTrace
	default:
		return fmt.Errorf("gocoll: %s=%q: want info, debug or trace", EnvDebug, d)
	}
	var err error
	if j.DebugSubsys, err = ParseSubsys(e.get(EnvDebugSubsys)); err != nil {
		return err
	}
	j.FitGoMaxProcs = e.get(EnvGoMaxProcs) == ""
	if j.HeartbeatTimeout, err = e.duration(EnvHeartbeatTimeout, DefaultHeartbeatTimeout, MinHeartbeatTimeout); err != nil {
		return err
	}
	if j.ConnectTimeout, err = e.duration(EnvConnectTimeout, DefaultConnectTimeout, time.Millisecond); err != nil {
		return err
	}
	if j.PeerTimeout, err = e.durationIn(EnvPeerTimeout, DefaultPeerTimeout, MinPeerTimeout, MaxPeerTimeout); err != nil {
		return err
	}
	if j.OpTimeout, err = e.duration(EnvTimeout, 0, time.Millisecond); err != nil {
		return err
	}
	if j.StallTimeout, err = e.duration(EnvStallTimeout, 0, time.Millisecond); err != nil {
		return err
	}
	if err := e.paths(j); err != nil {
		return err
	}
	if err := e.protection(j); err != nil {
		return err
	}
	if j.UDPProbeTimeout, err = e.durationIn(EnvUDPProbeTimeout, DefaultUDPProbeTimeout, MinUDPProbeTimeout,
		MaxUDPProbeTimeout); err != nil {
		return err
	}
	if j.Algo, err = collective.ParseAlgoSpec(e.get(EnvAlgo)); err != nil {
		return fmt.Errorf("gocoll: %s: %w", EnvAlgo, err)
	}
	if v := e.get(EnvSpinWait); v != "" {
		d, err := time.ParseDuration(v)
		if v == "0" {
			d, err = 0, nil
		}
		if err != nil || d < 0 || d > shm.MaxSpinWait {
			return fmt.Errorf("gocoll: %s=%q: want a duration (like 50us) in [0, %v]", EnvSpinWait, v, shm.MaxSpinWait)
		}
		j.SpinWait = d
		if d == 0 {
			j.SpinWait = -1 // never
		}
	}
	return nil
}

// paths applies GOCOLL_UDP_PORTS and GOCOLL_PATH_IFACES.
func (e envReader) paths(j *Job) error {
	if v := e.get(EnvUDPPorts); v != "" {
		r, err := mrtransport.ParsePortRange(v)
		if err != nil {
			return fmt.Errorf("gocoll: %s: %v (want a range like 50000-50999)", EnvUDPPorts, err)
		}
		if r.Len() < mrtransport.DefaultPaths {
			return fmt.Errorf("gocoll: %s=%q holds %d ports: each rank needs %d (one per path), so give every rank of a host room",
				EnvUDPPorts, v, r.Len(), mrtransport.DefaultPaths)
		}
		j.UDPPorts = r
	}
	if v := e.get(EnvPathIfaces); v != "" {
		ifs, err := mrtransport.ParseInterfaces(v)
		if err != nil {
			return fmt.Errorf("gocoll: %s: %v (want interface names or local IP addresses, like eth0,eth1)", EnvPathIfaces, err)
		}
		j.PathInterfaces = ifs
	}
	return nil
}

// Values of Job.Encrypt.
const (
	EncryptSites = "sites"
	EncryptAll   = "all"
)

// protection applies GOCOLL_AUTH and GOCOLL_ENCRYPT.
func (e envReader) protection(j *Job) error {
	switch v := strings.ToLower(e.get(EnvAuth)); v {
	case "", "header":
	case "full":
		j.AuthFull = true
	default:
		return fmt.Errorf("gocoll: %s=%q: want header or full", EnvAuth, v)
	}
	switch v := strings.ToLower(e.get(EnvEncrypt)); v {
	case "", "0", "off":
	case EncryptSites, EncryptAll:
		j.Encrypt = v
	default:
		return fmt.Errorf("gocoll: %s=%q: want off, %s or %s", EnvEncrypt, v, EncryptSites, EncryptAll)
	}
	return nil
}

// duration reads a Go duration ("30s") or a number of seconds, in [lo,
// MaxTimeout], def if unset.
func (e envReader) duration(name string, def, lo time.Duration) (time.Duration, error) {
	return e.durationIn(name, def, lo, MaxTimeout)
}

// durationIn is duration in [lo, hi] (hi at most MaxTimeout).
func (e envReader) durationIn(name string, def, lo, hi time.Duration) (time.Duration, error) {
	v := e.get(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		secs, serr := strconv.ParseFloat(v, 64)
		if serr != nil || secs != secs {
			return 0, fmt.Errorf("gocoll: %s=%q is not a duration (like 30s)", name, v)
		}
		d = time.Duration(min(secs, MaxTimeout.Seconds()+1) * float64(time.Second))
	}
	if d < lo || d > hi {
		return 0, fmt.Errorf("gocoll: %s=%q is outside [%v, %v]", name, v, lo, hi)
	}
	return d, nil
}

// flag reads 0/1 (or true/false), def if unset.
func (e envReader) flag(name string, def bool) (bool, error) {
	switch strings.ToLower(e.get(name)) {
	case "":
		return def, nil
	case "1", "true", "yes":
		return true, nil
	case "0", "false", "no":
		return false, nil
	}
	return false, fmt.Errorf("gocoll: %s=%q: want 1 or 0", name, e.get(name))
}

// Derived store ports lie in [derivedPortBase, derivedPortBase+derivedPorts),
// below Linux's default ephemeral range (32768 and up).
const (
	derivedPortBase = 20000
	derivedPorts    = 12000
)

// DerivedPort is the store port of a job whose launcher gave none: a hash
// of the job id, the same on every rank.
func DerivedPort(jobID string) int {
	return derivedPortBase + int(hash64(jobID)%derivedPorts)
}

func loopbackStore(jobID string) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(DerivedPort(jobID)))
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// linkSettings applies GOCOLL_PROBE, GOCOLL_LINKS, GOCOLL_TOPO_FILE and
// GOCOLL_TOPO_DUMP (probe.go uses them).
func (e envReader) linkSettings(j *Job) error {
	switch v := strings.ToLower(e.get(EnvProbe)); v {
	case "", "auto":
		j.Probe = ProbeAuto
	case "0", "false", "no":
		j.Probe = ProbeOff
	case "1", "true", "yes":
		j.Probe = ProbeOn
	default:
		return fmt.Errorf("gocoll: %s=%q: want 0 (never), 1 (always) or auto (unset: where the job spans hosts)", EnvProbe, e.get(EnvProbe))
	}
	var err error
	if j.Links, err = ParseLinks(e.get(EnvLinks)); err != nil {
		return fmt.Errorf("gocoll: %s: %v", EnvLinks, err)
	}
	j.TopoFile, j.TopoDump = e.get(EnvTopoFile), e.get(EnvTopoDump)
	return nil
}
