package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocoll/gocoll/topology"
	"github.com/stretchr/testify/require"
)

// gocoll topo --explain on a version 2 file: every candidate with its
// prediction, one chosen; a slow WAN in the file makes the hierarchical
// AllReduce the choice at 1 MiB, a fast one the ring. (At 64 MiB uniform
// links are a tie the model prices so since session 21's ramp pricing:
// gocoll sim ran hierarchical 92.9 against ring 94.0 ms there.)
func TestTopoExplain(t *testing.T) {
	for _, c := range []struct{ wan, want string }{
		{`{"latency": "5ms", "bandwidth": 1e7}`, "hierarchical"},
		{`{"latency": "25us", "bandwidth": 1.25e9}`, "ring"},
	} {
		path := writeTopology(t, 8, `"levels": {"wan": `+c.wan+`, "site": {"latency": "25us", "bandwidth": 1.25e9}, "host": {"latency": "25us", "bandwidth": 1.25e9}}`)
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"topo", "--explain", "1M", "--topology", path, "--coll", "allreduce"}, nil, &out, &errOut, nil)
		require.Equal(t, 0, code, errOut.String())
		t.Logf("\n%s", out.String())
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		require.Len(t, lines, 6, out.String()) // title, header, 4 algorithms
		require.Regexp(t, `^`+c.want+`\s+\S+\s+\(chosen\)$`, lines[2])
		require.Equal(t, 1, strings.Count(out.String(), "(chosen)"))
	}

	path := writeTopology(t, 4, `"levels": {"wan": {"latency": "5ms", "bandwidth": 1e7}}`)
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"topo", "--explain", "1M", "--topology", path}, nil, &out, &errOut, nil), errOut.String())
	for _, c := range []string{"# AllReduce of 1048576 B", "# Broadcast of", "# Reduce of"} {
		require.Contains(t, out.String(), c)
	}

	// A size a job prices rounded (collective.PricedBytes) is explained at
	// that size, and says so; --chunk sets the chunk.
	out.Reset()
	require.Equal(t, 0, run(context.Background(), []string{"topo", "--explain", "20000000", "--chunk", "2M", "--topology", path, "--coll", "allreduce"}, nil, &out, &errOut, nil), errOut.String())
	require.Contains(t, out.String(), "# 20000000 B priced as 18874368 B")
	require.Contains(t, out.String(), "# AllReduce of 18874368 B on 4 ranks (2 hosts, 2 sites), chunk 2097152 B")
}

// --dump writes a version 2 file that loads back with the same ranks and
// the figures the model used.
func TestTopoDump(t *testing.T) {
	path := writeTopology(t, 4, `"levels": {"wan": {"latency": "5ms", "bandwidth": 1e7, "lanes": 4}}, "links": [{"hosts": ["h0", "h1"], "latency": "9ms", "bandwidth": 2e6}]`)
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"topo", "--dump", "--topology", path}, nil, &out, &errOut, nil), errOut.String())
	dumped := filepath.Join(t.TempDir(), "dump.json")
	require.NoError(t, os.WriteFile(dumped, out.Bytes(), 0o644))
	got, err := topology.Load(dumped)
	require.NoError(t, err)
	want, err := topology.Load(path)
	require.NoError(t, err)
	require.Equal(t, want.Ranks, got.Ranks)
	require.Equal(t, *want.Links.WAN, *got.Links.WAN)
	require.NotNil(t, got.Links.Host) // the assumed figures, written out
	require.NotNil(t, got.Links.Site)
	require.Equal(t, want.Links.Pairs, got.Links.Pairs)
}

func TestTopoUsageErrors(t *testing.T) {
	path := writeTopology(t, 2, `"levels": {"rack": {"latency": "5ms", "bandwidth": 1}}`)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{}, exitUsage, "want --explain SIZE or --dump"},
		{[]string{"--explain", "1M", "--dump"}, exitUsage, "want --explain SIZE or --dump"},
		{[]string{"--explain", "lots"}, exitUsage, "lots"},
		{[]string{"--explain", "1M", "--coll", "gather"}, exitUsage, `--coll "gather"`},
		{[]string{"--explain", "1M", "--channels", "99"}, exitUsage, "--channels 99"},
		{[]string{"--explain", "1M", "--channels", "-1"}, exitUsage, "--channels -1"},
		{[]string{"--explain", "1M"}, 1, "no --topology FILE, and not a rank of a job"},
		{[]string{"--explain", "1M", "--topology", path}, 1, `unknown level "rack"`},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append([]string{"topo"}, c.args...), []string{}, &out, &errOut, nil)
		require.Equal(t, c.code, code, "%v: %s", c.args, errOut.String())
		require.Contains(t, errOut.String(), c.want, c.args)
	}
}

// Under gocoll run, gocoll topo explains the job's own topology: rank 0
// prints it once, in the job's chunk (MetaRoCE's 2 MiB, not --chunk's
// 512K default), as the job's own choices price it.
func TestTopoUnderRun(t *testing.T) {
	o := gocollRun(t, 60*time.Second, "-np", "3", "-x", "GOCOLL_TRANSPORT=metaroce", "--", bins.gocoll, "topo", "--explain", "64K", "--coll", "allreduce")
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	require.Contains(t, o.stdout, "[rank 0] # AllReduce of 65536 B on 3 ranks (1 hosts, 1 sites), chunk 2097152 B")
	require.Equal(t, 1, strings.Count(o.stdout, "(chosen)"), o.stdout)
}

// TestTopoUnderRunChannels (review B16 F2): in a job, --explain prices the
// job's Config.Channels (GOCOLL_CHANNELS), as the job's automatic choice
// does: 8 ranks on 4 hosts of one site (GOCOLL_HOST per rank), 1.5 MiB in
// chunks of 512K, with GOCOLL_CHANNELS=4 the model chooses hierarchical,
// where with the channels left to it (--channels 0, a job without
// GOCOLL_CHANNELS) it chooses the ring; --channels N on a file prices N.
// (At 2 MiB the hierarchical AllReduce now runs in two pieces and is
// chosen either way, as gocoll sim agrees: 2.833 ms against the ring's
// 2.986.)
func TestTopoUnderRunChannels(t *testing.T) {
	script := `GOCOLL_HOST=h$((GOCOLL_RANK/2)) GOCOLL_LOCAL_RANK=$((GOCOLL_RANK%2)) exec "$0" "$@"`
	o := gocollRun(t, 60*time.Second, "-np", "8", "-x", "GOCOLL_PROBE=0", "-x", "GOCOLL_CHANNELS=4",
		"--", "/bin/sh", "-c", script, bins.gocoll, "topo", "--explain", "1536K", "--coll", "allreduce", "--chunk", "512K")
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	require.Contains(t, o.stdout, "[rank 0] # AllReduce of 1572864 B on 8 ranks (4 hosts, 1 sites), chunk 524288 B, 4 channels asked\n")
	require.Regexp(t, `\[rank 0\] hierarchical\s+\S+\s+\(chosen\)`, o.stdout)

	var ranks []string
	for r := range 8 {
		ranks = append(ranks, `{"rank": `+strconv.Itoa(r)+`, "host": "h`+strconv.Itoa(r/2)+`", "site": "s0", "local_rank": `+strconv.Itoa(r%2)+`}`)
	}
	path := filepath.Join(t.TempDir(), "topo.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version": 2, "ranks": [`+strings.Join(ranks, ", ")+`]}`), 0o644))
	for _, c := range []struct{ channels, want string }{{"4", "hierarchical"}, {"0", "ring"}} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"topo", "--explain", "1536K", "--topology", path, "--coll", "allreduce", "--chunk", "512K", "--channels", c.channels}, nil, &out, &errOut, nil)
		require.Equal(t, 0, code, errOut.String())
		require.Regexp(t, `(?m)^`+c.want+`\s+\S+\s+\(chosen\)$`, out.String(), "--channels %s", c.channels)
	}
}

// gocoll topo --probe --dump under gocoll run: the job measures its one
// level (ranks of one host) and rank 0 writes a version 2 file with it.
func TestTopoProbeUnderRun(t *testing.T) {
	o := gocollRun(t, 60*time.Second, "-np", "3", "--tag-output=false", "--", bins.gocoll, "topo", "--probe", "--dump")
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	got, err := topology.Parse([]byte(o.stdout))
	require.NoError(t, err, o.stdout)
	require.Equal(t, 3, got.Size())
	require.NotNil(t, got.Links)
	require.NotNil(t, got.Links.Host)
	t.Logf("measured between two ranks of this host: %v one way, %.3g B/s", got.Links.Host.Latency, got.Links.Host.Bandwidth)
	require.Positive(t, got.Links.Host.Bandwidth)

	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"topo", "--probe", "--dump", "--topology", writeTopology(t, 2, `"levels": {}`)}, nil, &out, &errOut, nil)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut.String(), "--probe measures a job's links")
}

// The link figures are cached per job: the first run of a job probes
// (GOCOLL_PROBE=1, as the world forms) and rank 0 puts the figures in the
// job's store; rank 1 then fails, and the restarted round takes them from
// the cache (GOCOLL_LINKS, set by gocoll run) without probing again.
func TestTopoLinksCachedAcrossRestart(t *testing.T) {
	script := `"$0" "$@" || exit; if [ "$GOCOLL_RESTART_COUNT" = 0 ] && [ "$GOCOLL_RANK" = 1 ]; then exit 3; fi`
	o := gocollRun(t, 2*time.Minute, "-np", "2", "--max-restarts", "1", "-x", "GOCOLL_PROBE=1", "-x", "GOCOLL_DEBUG=info",
		"--", "/bin/sh", "-c", script, bins.gocoll, "topo", "--dump")
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	require.Contains(t, o.stderr, "gocoll run: restarting the job (restart 1 of at most 1)\n")
	first, again, ok := strings.Cut(o.stderr, "restarting the job")
	require.True(t, ok)
	require.Contains(t, first, `msg="gocoll: link figures" rank=0 host="`)
	require.Contains(t, first, "(probe)")
	require.NotContains(t, first, "(cache)")
	require.Contains(t, again, "(cache)", again)
	require.NotContains(t, again, "(probe)", again)
}

// A file whose ranks share one machine of one core and whose levels give
// CPU costs: --explain says so and marks the candidates the CPU binds;
// --no-cpu leaves the term out, and the predictions fall.
func TestTopoExplainCPU(t *testing.T) {
	var ranks []string
	for r := range 4 {
		ranks = append(ranks, `{"rank": `+strconv.Itoa(r)+`, "host": "h`+strconv.Itoa(r/2)+`", "local_rank": `+strconv.Itoa(r%2)+
			`, "cpu": {"machine": "lab", "cores": 1}}`)
	}
	path := filepath.Join(t.TempDir(), "topo.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version": 2, "ranks": [`+strings.Join(ranks, ",")+`], "levels": {`+
		`"host": {"latency": "5us", "bandwidth": 4e9, "cpu_per_byte": 5e-10, "cpu_per_message": "10us"},`+
		`"site": {"latency": "50us", "bandwidth": 1e9, "cpu_per_byte": 2e-9, "cpu_per_message": "40us"}}}`), 0o644))
	explain := func(extra ...string) string {
		var out, errOut bytes.Buffer
		args := append([]string{"topo", "--explain", "4M", "--topology", path, "--coll", "allreduce"}, extra...)
		require.Equal(t, 0, run(context.Background(), args, nil, &out, &errOut, nil), errOut.String())
		t.Logf("\n%s", out.String())
		return out.String()
	}
	with, without := explain(), explain("--no-cpu")
	require.Contains(t, with, "# 1 machines, at most 4 ranks on one, the fewest cores 1")
	require.Contains(t, with, "site 2 ns (0) / 40µs")
	require.Contains(t, with, "(binds)")
	require.NotContains(t, without, "machines")
	require.NotContains(t, without, "(binds)")
	require.NotEqual(t, with, without)
}
