package launcher

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/internal/jobkey"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
)

func envOf(kv ...string) LookupFunc { return LookupIn(kv) }

func TestParseEnvLaunchers(t *testing.T) {
	ompiPort := strconv.Itoa(DerivedPort("ompi-2105409537"))
	slurmPort := strconv.Itoa(DerivedPort("slurm-56.0"))
	cases := []struct {
		name string
		env  []string
		want Job // only the fields compared below
	}{
		{"gocoll", []string{"GOCOLL_RANK=2", "GOCOLL_WORLD_SIZE=4", "GOCOLL_LOCAL_RANK=0",
			"GOCOLL_STORE=10.1.0.11:23456", "GOCOLL_STORE_SERVE=1", "GOCOLL_JOB_KEY=" + testJobKey, "GOCOLL_JOB_ID=j1",
			"GOCOLL_SITE=paris", "GOCOLL_HOST=s1h2", "GOCOLL_ADDR=10.1.0.12"},
			Job{Launcher: "gocoll", Rank: 2, Size: 4, LocalRank: 0, Store: "10.1.0.11:23456", StoreAtRank0: true,
				JobID: "j1", JobKey: mustKey(testJobKey), Site: "paris", Host: "s1h2", Addr: "10.1.0.12"}},
		{"gocoll rank 0 serves", []string{"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=2", "GOCOLL_JOB_ID=x", "GOCOLL_INSECURE=1"},
			Job{Launcher: "gocoll", Rank: 0, Size: 2, LocalRank: -1, Store: "127.0.0.1:" + strconv.Itoa(DerivedPort("x")),
				StoreAtRank0: true, ServeStore: true, JobID: "x", JobKey: jobkey.Insecure()}},
		{"gocoll store elsewhere", []string{"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=2", "GOCOLL_STORE=127.0.0.1:999",
			"GOCOLL_STORE_SERVE=0", "GOCOLL_JOB_ID=x", "GOCOLL_JOB_KEY=" + testJobKey},
			Job{Launcher: "gocoll", Rank: 0, Size: 2, LocalRank: -1, Store: "127.0.0.1:999", JobID: "x", JobKey: mustKey(testJobKey)}},
		{"openmpi one host", []string{"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=3",
			"OMPI_COMM_WORLD_LOCAL_SIZE=4", "OMPI_MCA_ess_base_jobid=2105409537", "SLURM_PROCID=0", "SLURM_NTASKS=1", "GOCOLL_INSECURE=1"},
			Job{Launcher: "openmpi", Rank: 3, Size: 4, LocalRank: 3, Store: "127.0.0.1:" + ompiPort,
				StoreAtRank0: true, JobID: "ompi-2105409537", JobKey: jobkey.Insecure()}},
		{"openmpi hosts with store", []string{"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=8", "OMPI_COMM_WORLD_LOCAL_RANK=0",
			"OMPI_COMM_WORLD_LOCAL_SIZE=4", "OMPI_MCA_ess_base_jobid=7", "GOCOLL_STORE=node1:29500", "GOCOLL_JOB_KEY=" + testJobKey},
			Job{Launcher: "openmpi", Rank: 0, Size: 8, Store: "node1:29500", StoreAtRank0: true, ServeStore: true,
				JobID: "ompi-7", JobKey: mustKey(testJobKey)}},
		{"slurm one node", []string{"SLURM_PROCID=2", "SLURM_NTASKS=4", "SLURM_STEP_NUM_TASKS=4", "SLURM_LOCALID=2",
			"SLURM_JOB_NODELIST=vm", "SLURM_STEP_NUM_NODES=1", "SLURM_JOB_ID=56", "SLURM_STEP_ID=0", "SLURMD_NODENAME=vm", "GOCOLL_INSECURE=1"},
			Job{Launcher: "slurm", Rank: 2, Size: 4, LocalRank: 2, Host: "vm", Store: "127.0.0.1:" + slurmPort,
				StoreAtRank0: true, JobID: "slurm-56.0", JobKey: jobkey.Insecure()}},
		{"slurm nodes", []string{"SLURM_PROCID=5", "SLURM_NTASKS=8", "SLURM_LOCALID=1", "SLURM_STEP_NODELIST=gnode[10,20-22]",
			"SLURM_STEP_NUM_NODES=4", "SLURM_JOB_ID=56", "SLURM_STEP_ID=0", "GOCOLL_SITE=east", "GOCOLL_JOB_KEY=" + testJobKey},
			Job{Launcher: "slurm", Rank: 5, Size: 8, LocalRank: 1, Site: "east", Store: "gnode10:" + slurmPort,
				StoreAtRank0: true, JobID: "slurm-56.0", JobKey: mustKey(testJobKey)}},
		{"torchrun", []string{"RANK=1", "WORLD_SIZE=2", "LOCAL_RANK=1", "MASTER_ADDR=10.0.0.1", "MASTER_PORT=29500",
			"TORCHELASTIC_RUN_ID=abc", "GOCOLL_JOB_KEY=" + testJobKey},
			Job{Launcher: "torchrun", Rank: 1, Size: 2, LocalRank: 1, Store: "10.0.0.1:29500", StoreAtRank0: true,
				JobID: "torch-abc", JobKey: mustKey(testJobKey)}},
		{"torchrun agent store", []string{"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=10.0.0.1", "MASTER_PORT=29500",
			"TORCHELASTIC_RUN_ID=abc", "TORCHELASTIC_USE_AGENT_STORE=True", "GOCOLL_JOB_KEY=" + testJobKey},
			Job{Launcher: "torchrun", Rank: 0, Size: 2, LocalRank: -1, Store: "10.0.0.1:" + strconv.Itoa(DerivedPort("torch-abc")),
				StoreAtRank0: true, ServeStore: true, JobID: "torch-abc", JobKey: mustKey(testJobKey)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := ParseEnv(envOf(c.env...))
			require.NoError(t, err)
			got := Job{Launcher: j.Launcher, Rank: j.Rank, Size: j.Size, LocalRank: j.LocalRank, Host: j.Host,
				Site: j.Site, Addr: j.Addr, Store: j.Store, StoreAtRank0: j.StoreAtRank0, ServeStore: j.ServeStore,
				JobID: j.JobID, JobKey: j.JobKey}
			require.Equal(t, c.want, got)
			require.Equal(t, DefaultTransport, j.Transport)
			require.Equal(t, DefaultHeartbeatTimeout, j.HeartbeatTimeout)
			require.Equal(t, DefaultConnectTimeout, j.ConnectTimeout)
			require.Equal(t, DefaultPeerTimeout, j.PeerTimeout)
			require.Equal(t, DefaultUDPProbeTimeout, j.UDPProbeTimeout)
			require.True(t, j.UDPPorts.IsZero())
			require.Empty(t, j.PathInterfaces)
			require.Equal(t, mrtransport.DefaultArrivalTimes, j.ArrivalTimes)
			require.Zero(t, j.Paths) // mrtransport.DefaultPaths
			require.False(t, j.Logging)
		})
	}
}

func TestParseEnvSettings(t *testing.T) {
	base := []string{"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_INSECURE=1"}
	j, err := ParseEnv(envOf(append(base, "GOCOLL_DEBUG=trace", "GOCOLL_TRANSPORT=TCP",
		"GOCOLL_HEARTBEAT_TIMEOUT=2s", "GOCOLL_CONNECT_TIMEOUT=1.5", "GOCOLL_WATCH_STDIN=1",
		"GOCOLL_PEER_TIMEOUT=750ms", "GOCOLL_UDP_PROBE_TIMEOUT=2s", "GOCOLL_UDP_PORTS=50000-50999",
		"GOCOLL_PATH_IFACES=eth0, 10.2.0.1", "GOCOLL_ARRIVAL_TIMES=1", "GOCOLL_MR_SAMPLES=/tmp/s")...))
	require.NoError(t, err)
	require.True(t, j.Logging)
	require.Equal(t, LevelTrace, j.LogLevel)
	require.Equal(t, 2*time.Second, j.HeartbeatTimeout)
	require.Equal(t, 1500*time.Millisecond, j.ConnectTimeout)
	require.Equal(t, 750*time.Millisecond, j.PeerTimeout)
	require.Equal(t, 2*time.Second, j.UDPProbeTimeout)
	require.Equal(t, mrtransport.PortRange{Lo: 50000, Hi: 50999}, j.UDPPorts)
	require.Equal(t, []string{"eth0", "10.2.0.1"}, j.PathInterfaces)
	require.True(t, j.ArrivalTimes)
	require.Equal(t, "/tmp/s", j.SendSamples)
	require.True(t, j.WatchStdin)
	require.Zero(t, j.OpTimeout) // the collective package's default
	j, err = ParseEnv(envOf(append(base, "GOCOLL_TIMEOUT=90s", "GOCOLL_STALL_TIMEOUT=2.5")...))
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, j.OpTimeout)
	require.Equal(t, 2500*time.Millisecond, j.StallTimeout)

	j, err = ParseEnv(envOf(append(base, "GOCOLL_DEBUG=info")...))
	require.NoError(t, err)
	require.Equal(t, slog.LevelInfo, j.LogLevel)
	j, err = ParseEnv(envOf(append(base, "GOCOLL_TRANSPORT=metaroce")...))
	require.NoError(t, err)
	require.Equal(t, TransportMetaRoCE, j.Transport)
	require.Zero(t, j.SpinWait) // the transport's default

	j, err = ParseEnv(envOf(append(base, "GOCOLL_TRANSPORT=auto", "GOCOLL_SPIN_WAIT=20us")...))
	require.NoError(t, err)
	require.Equal(t, TransportAuto, j.Transport)
	require.Equal(t, 20*time.Microsecond, j.SpinWait)
	j, err = ParseEnv(envOf(append(base, "GOCOLL_SPIN_WAIT=0")...))
	require.NoError(t, err)
	require.Negative(t, j.SpinWait) // never
	require.Zero(t, j.CoalesceWait) // mrtransport's default rule
	j, err = ParseEnv(envOf(append(base, "GOCOLL_MR_COALESCE=2ms")...))
	require.NoError(t, err)
	require.Equal(t, 2*time.Millisecond, j.CoalesceWait)
	j, err = ParseEnv(envOf(append(base, "GOCOLL_MR_COALESCE=0")...))
	require.NoError(t, err)
	require.Negative(t, j.CoalesceWait) // off

	require.Zero(t, j.Algo) // auto
	j, err = ParseEnv(envOf(append(base, "GOCOLL_ALGO=tree,allreduce:hierarchical")...))
	require.NoError(t, err)
	require.Equal(t, collective.AlgoSpec{AllReduce: collective.AlgoHierarchical, Broadcast: collective.AlgoTree, Reduce: collective.AlgoTree}, j.Algo)
	_, err = ParseEnv(envOf(append(base, "GOCOLL_ALGO=reduce:direct")...))
	require.ErrorContains(t, err, "GOCOLL_ALGO")
}

// GOCOLL_PATHS sets Job.Paths over its whole range, and GOCOLL_UDP_PORTS
// then needs that many ports, not DefaultPaths.
func TestParseEnvPaths(t *testing.T) {
	base := []string{"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_INSECURE=1"}
	for _, n := range []string{"1", "16", "256"} {
		j, err := ParseEnv(envOf(append(base, "GOCOLL_PATHS="+n)...))
		require.NoError(t, err, n)
		require.Equal(t, n, strconv.Itoa(j.Paths))
	}
	j, err := ParseEnv(envOf(append(base, "GOCOLL_PATHS=4", "GOCOLL_UDP_PORTS=5000-5003")...))
	require.NoError(t, err)
	require.Equal(t, 4, j.Paths)
	require.Equal(t, 4, j.UDPPorts.Len())
	_, err = ParseEnv(envOf(append(base, "GOCOLL_UDP_PORTS=5000-5003")...))
	require.ErrorContains(t, err, "each rank needs 8")
}

func TestParseEnvErrors(t *testing.T) {
	cases := map[string][]string{
		"no launcher environment":                                              {"PATH=/bin", "HOME=/root"},
		"GOCOLL_WORLD_SIZE is not set":                                         {"GOCOLL_RANK=0"},
		`GOCOLL_RANK="x" is not a whole number`:                                {"GOCOLL_RANK=x", "GOCOLL_WORLD_SIZE=2"},
		"GOCOLL_RANK=4 is not below":                                           {"GOCOLL_RANK=4", "GOCOLL_WORLD_SIZE=4"},
		`GOCOLL_WORLD_SIZE="0"`:                                                {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=0"},
		`GOCOLL_WORLD_SIZE="-3"`:                                               {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=-3"},
		`GOCOLL_STORE="nohost" is not host:port`:                               {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_STORE=nohost"},
		`GOCOLL_STORE="h:99999" has no valid`:                                  {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_STORE=h:99999"},
		"port 0 only works":                                                    {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=2", "GOCOLL_STORE=h:0"},
		`GOCOLL_TRANSPORT="udp": want tcp`:                                     {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_TRANSPORT=udp"},
		`GOCOLL_SPIN_WAIT="soon": want a duration`:                             {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_SPIN_WAIT=soon"},
		`GOCOLL_SPIN_WAIT="1s": want a duration`:                               {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_SPIN_WAIT=1s"},
		`GOCOLL_MR_COALESCE="1s" is outside`:                                   {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_MR_COALESCE=1s"},
		`GOCOLL_SPIN_WAIT="-5us"`:                                              {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_SPIN_WAIT=-5us"},
		`GOCOLL_DEBUG="loud"`:                                                  {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_DEBUG=loud"},
		`GOCOLL_HEARTBEAT_TIMEOUT="soon"`:                                      {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_HEARTBEAT_TIMEOUT=soon"},
		`GOCOLL_HEARTBEAT_TIMEOUT="1ms" is outsi`:                              {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_HEARTBEAT_TIMEOUT=1ms"},
		`GOCOLL_PEER_TIMEOUT="soon" is not a`:                                  {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_PEER_TIMEOUT=soon"},
		`GOCOLL_PEER_TIMEOUT="10ms" is outside [100ms, 1h0m0s]`:                {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_PEER_TIMEOUT=10ms"},
		`GOCOLL_PEER_TIMEOUT="2h" is outside`:                                  {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_PEER_TIMEOUT=2h"},
		`GOCOLL_UDP_PROBE_TIMEOUT="1ms" is out`:                                {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_UDP_PROBE_TIMEOUT=1ms"},
		`GOCOLL_UDP_PROBE_TIMEOUT="1h" is outside [100ms, 10m0s]`:              {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_UDP_PROBE_TIMEOUT=1h"},
		`GOCOLL_UDP_PORTS: mrtransport: port ra`:                               {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_UDP_PORTS=5000-x"},
		`GOCOLL_UDP_PORTS: mrtransport`:                                        {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_UDP_PORTS=6000-5000"},
		`GOCOLL_UDP_PORTS="5000-5003" holds 4 `:                                {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_UDP_PORTS=5000-5003"},
		`GOCOLL_PATHS="0" is not a whole number from 1 to 256`:                 {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_PATHS=0"},
		`GOCOLL_PATHS="257" is not a whole number from 1 to 256`:               {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_PATHS=257"},
		`GOCOLL_PATHS="many" is not a whole number`:                            {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_PATHS=many"},
		`GOCOLL_UDP_PORTS="5000-5011" holds 12 ports: each rank needs 16`:      {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_PATHS=16", "GOCOLL_UDP_PORTS=5000-5011"},
		`GOCOLL_PATH_IFACES: mrtransport: inter`:                               {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_PATH_IFACES=eth0,,eth1"},
		`GOCOLL_ARRIVAL_TIMES="on": want 1 or 0`:                               {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_ARRIVAL_TIMES=on"},
		`GOCOLL_CONNECT_TIMEOUT="-1"`:                                          {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_CONNECT_TIMEOUT=-1"},
		`GOCOLL_TIMEOUT="soon" is not a`:                                       {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_TIMEOUT=soon"},
		`GOCOLL_STALL_TIMEOUT="0s" is outside`:                                 {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_STALL_TIMEOUT=0s"},
		`GOCOLL_STORE_SERVE="maybe"`:                                           {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_STORE_SERVE=maybe"},
		`GOCOLL_ADDR="here"`:                                                   {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_ADDR=here"},
		`GOCOLL_SITE: site "a b"`:                                              {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_SITE=a b"},
		"Open MPI job on several hosts needs":                                  {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=8", "OMPI_COMM_WORLD_LOCAL_SIZE=4"},
		"without MASTER_ADDR and MASTER_PORT":                                  {"RANK=0", "WORLD_SIZE=2"},
		`MASTER_PORT="http" is not`:                                            {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=http"},
		"SLURM_STEP_NODELIST: node list":                                       {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_STEP_NODELIST=n[1-", "SLURM_STEP_NUM_NODES=2"},
		"SLURM_NTASKS is not set":                                              {"SLURM_PROCID=0"},
		"job id":                                                               {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_JOB_ID=" + strings.Repeat("j", 200)},
		"GOCOLL_JOB_KEY: jobkey: invalid job key: 2000 bytes, want 16 to 1024": {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_JOB_KEY=" + strings.Repeat("k", 2000)},
		"GOCOLL_JOB_KEY: jobkey: invalid job key: 6 bytes":                     {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_JOB_KEY=s3cret"},
		"GOCOLL_JOB_KEY: jobkey: invalid job key: byte 3 is not printable":     {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_JOB_KEY=the wrong key, spaced"},
		"no job key: set GOCOLL_JOB_KEY to the same secret on every rank":      {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1"},
		"no job key: set GOCOLL_JOB_KEY":                                       {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_STEP_NUM_NODES=1", "GOCOLL_INSECURE=0"},
		"GOCOLL_INSECURE=1 is for a single host, but the store h:1 is not":     {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=1", "GOCOLL_INSECURE=1"},
		`GOCOLL_INSECURE="please"`:                                             {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_INSECURE=please"},
		"GOCOLL_JOB_KEY_STDIN is set but no job key was read":                  {"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_JOB_KEY_STDIN=1"},
	}
	for want, env := range cases {
		_, err := ParseEnv(envOf(env...))
		require.Error(t, err, "%v", env)
		require.Contains(t, err.Error(), want, "%v", env)
		require.NotContains(t, err.Error(), "\n")
		require.True(t, strings.HasPrefix(err.Error(), "gocoll: "), err.Error())
	}
}

// The gocoll variables win over Open MPI's, Open MPI's over torchrun's,
// torchrun's over Slurm's (mpirun and torchrun are often run inside a Slurm
// allocation, whose SLURM_PROCID is then the batch step's).
func TestParseEnvPrecedence(t *testing.T) {
	all := []string{"GOCOLL_RANK=1", "GOCOLL_WORLD_SIZE=5", "OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=6",
		"OMPI_COMM_WORLD_LOCAL_SIZE=6", "RANK=3", "WORLD_SIZE=7", "MASTER_ADDR=h", "MASTER_PORT=1",
		"SLURM_PROCID=4", "SLURM_NTASKS=8", "SLURM_STEP_NUM_NODES=1", "GOCOLL_JOB_KEY=" + testJobKey}
	for i, want := range []struct {
		launcher   string
		rank, size int
	}{{"gocoll", 1, 5}, {"openmpi", 2, 6}, {"torchrun", 3, 7}, {"slurm", 4, 8}} {
		var env []string
		for _, kv := range all {
			drop := false
			for _, gone := range []string{"GOCOLL_RANK", "OMPI_COMM_WORLD_RANK", "RANK="}[:i] {
				drop = drop || strings.HasPrefix(kv, gone)
			}
			if !drop {
				env = append(env, kv)
			}
		}
		j, err := ParseEnv(envOf(env...))
		require.NoError(t, err)
		require.Equal(t, want.launcher, j.Launcher)
		require.Equal(t, want.rank, j.Rank)
		require.Equal(t, want.size, j.Size)
	}
}

func TestDerivedPort(t *testing.T) {
	seen := map[int]bool{}
	for i := range 1000 {
		p := DerivedPort("job-" + strconv.Itoa(i))
		require.GreaterOrEqual(t, p, 20000)
		require.Less(t, p, 32000)
		seen[p] = true
	}
	require.Greater(t, len(seen), 900) // spread, not a constant
	require.Equal(t, DerivedPort("a"), DerivedPort("a"))
}

func FuzzParseEnv(f *testing.F) {
	f.Add("GOCOLL_RANK", "1", "GOCOLL_WORLD_SIZE", "4", "GOCOLL_STORE", "h:1")
	f.Add("SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_STEP_NODELIST", "n[1-2]")
	f.Add("RANK", "0", "WORLD_SIZE", "2", "GOCOLL_HEARTBEAT_TIMEOUT", "1e300")
	f.Add("GOCOLL_RANK", "0", "GOCOLL_WORLD_SIZE", "1", "GOCOLL_UDP_PORTS", "50000-50007")
	f.Add("GOCOLL_RANK", "0", "GOCOLL_WORLD_SIZE", "1", "GOCOLL_PATH_IFACES", "eth0,10.0.0.1")
	f.Add("GOCOLL_RANK", "0", "GOCOLL_WORLD_SIZE", "1", "GOCOLL_PEER_TIMEOUT", "1e-3")
	f.Add("GOCOLL_RANK", "0", "GOCOLL_WORLD_SIZE", "2", "GOCOLL_JOB_KEY", "0123456789abcdef0")
	f.Add("RANK", "0", "WORLD_SIZE", "2", "GOCOLL_JOB_KEY", "0123456789abcdef\x01")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		j, err := ParseEnv(envOf("GOCOLL_INSECURE=1", k1+"="+v1, k2+"="+v2, k3+"="+v3, "MASTER_ADDR=h", "MASTER_PORT=2"))
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			for _, v := range []string{v1, v2, v3} { // a key's text never shows
				if len(v) >= MinJobKeyBytes {
					require.NotContains(t, err.Error(), v)
				}
			}
			return
		}
		require.True(t, j.Rank >= 0 && j.Rank < j.Size)
		require.NotEmpty(t, j.Store)
		require.False(t, j.JobKey.IsZero())
		require.GreaterOrEqual(t, j.HeartbeatTimeout, MinHeartbeatTimeout)
		require.LessOrEqual(t, j.HeartbeatTimeout, MaxTimeout)
		require.True(t, j.PeerTimeout >= MinPeerTimeout && j.PeerTimeout <= MaxPeerTimeout, "%v", j.PeerTimeout)
		require.True(t, j.UDPProbeTimeout >= MinUDPProbeTimeout && j.UDPProbeTimeout <= MaxUDPProbeTimeout)
		require.True(t, j.UDPPorts.IsZero() || j.UDPPorts.Len() >= mrtransport.DefaultPaths, "%v", j.UDPPorts)
	})
}

// mustKey parses a job key that a test knows is valid.
func mustKey(text string) jobkey.Key {
	k, err := jobkey.Parse(text)
	if err != nil {
		panic(err)
	}
	return k
}

// TestJobKeyEnv: a job id derived from the key tells nothing of it; the key
// read from stdin stands for GOCOLL_JOB_KEY; a Job prints no key.
func TestJobKeyEnv(t *testing.T) {
	j, err := ParseEnv(envOf("GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=2", "GOCOLL_JOB_KEY="+testJobKey))
	require.NoError(t, err)
	require.Regexp(t, `^k[0-9a-f]{16}$`, j.JobID)
	require.True(t, j.JobKey.Equal(mustKey(testJobKey)))
	require.NotContains(t, fmt.Sprintf("%v %+v %#v", j, j, j), testJobKey)

	lookup := withJobKey(envOf("GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_JOB_KEY_STDIN=1"), testJobKey)
	j, err = ParseEnv(lookup)
	require.NoError(t, err)
	require.Equal(t, testJobKey, j.JobKey.Reveal())

	for in, want := range map[string]string{
		testJobKey + "\nmore input": testJobKey,
		"\n":                        "",
	} {
		got, err := readKeyLine(strings.NewReader(in))
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	for in, want := range map[string]string{
		testJobKey:                            "stdin ended after 23 bytes",
		strings.Repeat("k", MaxJobKeyBytes+1): "longer than 1024 bytes",
	} {
		_, err := readKeyLine(strings.NewReader(in))
		require.ErrorContains(t, err, want)
		require.NotContains(t, err.Error(), testJobKey)
	}
	r := strings.NewReader(testJobKey + "\nrest")
	_, err = readKeyLine(r)
	require.NoError(t, err)
	require.Equal(t, 4, r.Len(), "reads nothing past the key's line")
}
