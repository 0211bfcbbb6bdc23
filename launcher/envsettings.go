package launcher

import (
	"cmp"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher/hosts"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
	"github.com/gocoll/gocoll/transport/shm"
)

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

// LevelTrace is the slog level GOCOLL_DEBUG=trace selects.
const LevelTrace = slog.LevelDebug - 4

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

// paths applies GOCOLL_PATHS, GOCOLL_UDP_PORTS, GOCOLL_PATH_IFACES,
// GOCOLL_ARRIVAL_TIMES, GOCOLL_MR_SAMPLES and GOCOLL_MR_COALESCE.
func (e envReader) paths(j *Job) error {
	var err error
	if j.Paths, err = e.optInt(EnvPaths, 1, metaroce.MaxPaths, 0); err != nil {
		return err
	}
	if v := e.get(EnvUDPPorts); v != "" {
		r, err := mrtransport.ParsePortRange(v)
		if err != nil {
			return fmt.Errorf("gocoll: %s: %v (want a range like 50000-50999)", EnvUDPPorts, err)
		}
		need := cmp.Or(j.Paths, mrtransport.DefaultPaths)
		if r.Len() < need {
			return fmt.Errorf("gocoll: %s=%q holds %d ports: each rank needs %d (one per path, %s), so give every rank of a host room",
				EnvUDPPorts, v, r.Len(), need, EnvPaths)
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
	j.ArrivalTimes, err = e.flag(EnvArrivalTimes, mrtransport.DefaultArrivalTimes)
	j.SendSamples = strings.TrimSpace(e.get(EnvMRSamples))
	if err != nil {
		return err
	}
	return e.coalesce(j)
}

// coalesce applies GOCOLL_MR_COALESCE: a duration up to
// mrtransport.MaxCoalesceWait; 0 is off (-1, mrtransport's off); unset
// leaves mrtransport's default rule (0).
func (e envReader) coalesce(j *Job) (err error) {
	j.CoalesceWait, err = e.durationIn(EnvMRCoalesce, 0, 0, mrtransport.MaxCoalesceWait)
	if err == nil && j.CoalesceWait == 0 && e.get(EnvMRCoalesce) != "" {
		j.CoalesceWait = -1
	}
	return err
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
