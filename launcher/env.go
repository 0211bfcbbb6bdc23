package launcher

import (
	"fmt"
	"os"
	"strings"
)

// This file is the only code of gocoll that reads environment variables
// (a test checks it). Everything else receives a Job or an explicit list.
// The parsing is split by concern: envreader.go reads typed values,
// envlaunchers.go each launcher's rank, size and store, envsettings.go the
// variables every launcher shares, envsecurity.go the job key and the
// packets' protection; envjob.go defines the Job they fill.

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
	EnvPaths            = "GOCOLL_PATHS"             // metaroce: UDP paths (source ports) per rank, 1 to metaroce.MaxPaths (default mrtransport.DefaultPaths)
	EnvArrivalTimes     = "GOCOLL_ARRIVAL_TIMES"     // metaroce: 1 hands the core the kernel's receive time stamps (mrtransport.Config.ArrivalTimes), 0 not
	EnvMRCoalesce       = "GOCOLL_MR_COALESCE"       // metaroce: the endpoint reader's nap after a read of far peers' datagrams (mrtransport.Config.CoalesceWait); 0 off; unset: on where a rank runs with one processor
	EnvMRSamples        = "GOCOLL_MR_SAMPLES"        // metaroce: a file name; each rank writes its send samples to it, a dot and the rank appended (mrtransport.Config.SendSamples)
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
