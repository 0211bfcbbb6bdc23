package launcher

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
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
	// least Paths ports (mrtransport.DefaultPaths where Paths is 0); zero:
	// ephemeral ports.
	UDPPorts mrtransport.PortRange
	// Paths is the number of MetaRoCE paths, one UDP socket and source port
	// each, over which every connection of this rank sprays
	// (mrtransport.Config.Paths; GOCOLL_PATHS=16), 1 to metaroce.MaxPaths;
	// 0: mrtransport.DefaultPaths. A connection uses the smaller of its two
	// ranks' numbers (the core's HELLO), so set it alike on every rank.
	Paths int
	// PathInterfaces chooses each MetaRoCE path's interface or local IP
	// address, path i taking entry i mod len (mrtransport.Config.Interfaces;
	// GOCOLL_PATH_IFACES=eth0,eth1); empty: every path binds the rank's
	// address (GOCOLL_ADDR or the route toward the store).
	PathInterfaces []string
	// ArrivalTimes (GOCOLL_ARRIVAL_TIMES=1) has MetaRoCE hand its core
	// each datagram's kernel receive time (mrtransport.Config.ArrivalTimes);
	// unset, mrtransport.DefaultArrivalTimes.
	ArrivalTimes bool
	// CoalesceWait (GOCOLL_MR_COALESCE=1ms) is MetaRoCE's endpoint
	// reader's nap (mrtransport.Config.CoalesceWait); -1 (=0) off; 0
	// (unset) mrtransport's default: on where the rank runs with one
	// processor.
	CoalesceWait time.Duration
	// SendSamples (GOCOLL_MR_SAMPLES) turns MetaRoCE's send sampler on
	// (mrtransport.Config.SendSamples): the file each rank writes what
	// held its connections' data back to, a dot and the rank appended; ""
	// off.
	SendSamples string
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
	// shared memory's is 10 ms where its ranks of a host, processes,
	// outnumber the processors they can run on: shm.OversubscribedSpinWait;
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

// Values of Job.Encrypt.
const (
	EncryptSites = "sites"
	EncryptAll   = "all"
)
