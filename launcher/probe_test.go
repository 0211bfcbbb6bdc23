package launcher

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/topology"
)

// oneHostEnv is rankEnv with every rank on host h0 of site a.
func oneHostEnv(t *testing.T, addr string, r, n int, extra ...string) []string {
	env := rankEnv(t, addr, r, n, extra...)
	for i, e := range env {
		switch {
		case strings.HasPrefix(e, EnvHost+"="):
			env[i] = EnvHost + "=h0"
		case strings.HasPrefix(e, EnvSite+"="):
			env[i] = EnvSite + "=a"
		case strings.HasPrefix(e, EnvLocalRank+"="):
			env[i] = EnvLocalRank + "=" + strconv.Itoa(r)
		}
	}
	return env
}

// requireSameLinks checks that every world has the same figures and
// sources as worlds[0], and returns them.
func requireSameLinks(t *testing.T, worlds []*World) (topology.Links, [3]string) {
	t.Helper()
	for r, w := range worlds {
		require.NotNil(t, w.topo.Links, "rank %d", r)
		require.Equal(t, *worlds[0].topo.Links, *w.topo.Links, "rank %d", r)
		require.Equal(t, worlds[0].life.linksFrom, w.life.linksFrom, "rank %d", r)
	}
	return *worlds[0].topo.Links, worlds[0].life.linksFrom
}

// Eight ranks, two per host, hosts alternating between two sites, no
// GOCOLL_PROBE: the job spans hosts, so it probes every level as the world
// forms; every rank has the same figures, rank 0 puts them in the store
// under LinksKey, GOCOLL_TOPO_DUMP gets them as a topology file that loads
// back, and the world works.
func TestProbeByDefaultAcrossHosts(t *testing.T) {
	addr := testStore(t)
	const n = 8
	dump := filepath.Join(t.TempDir(), "topo.json")
	worlds := joinAllOK(t, n, func(r int) []string { return rankEnv(t, addr, r, n, EnvTopoDump+"="+dump) })
	ls, from := requireSameLinks(t, worlds)
	require.Equal(t, [3]string{fromProbe, fromProbe, fromProbe}, from)
	for l, k := range []*topology.Link{ls.Host, ls.Site, ls.WAN} {
		require.NotNil(t, k, "level %s not measured", levelNames[l])
		require.Positive(t, k.Bandwidth)
	}
	t.Logf("measured: host %+v, site %+v, wan %+v, reduce %g s a byte", *ls.Host, *ls.Site, *ls.WAN, ls.ReducePerByte)
	require.Positive(t, ls.ReducePerByte, "the reduction's CPU a byte (the process's CPU time is read here)")

	cached, err := worlds[0].life.kv.Get(context.Background(), LinksKey)
	require.NoError(t, err)
	back, err := ParseLinks(string(cached))
	require.NoError(t, err)
	require.Equal(t, ls, back, "the store's figures are the job's")

	got, err := topology.Load(dump)
	require.NoError(t, err)
	require.Equal(t, n, got.Size())
	require.Equal(t, ls, *got.Links, "the dump loads back with the job's figures")

	done := make(chan error, n)
	for _, w := range worlds {
		go func() { done <- w.Barrier(context.Background()) }()
	}
	for range n {
		require.NoError(t, <-done)
	}
}

// A restarted round (GOCOLL_LINKS, which gocoll run sets from the first
// round's LinksKey) and a job given the dumped file (GOCOLL_TOPO_FILE, on
// rank 0 only) take those figures and do not probe; GOCOLL_PROBE=0 does
// not probe either, and leaves the assumed figures.
func TestProbeSkippedWhenGiven(t *testing.T) {
	const n = 4
	host := &topology.Link{Latency: 3 * time.Microsecond, Bandwidth: 5e9}
	site := &topology.Link{Latency: 40 * time.Microsecond, Bandwidth: 1e9}
	wan := &topology.Link{Latency: 2 * time.Millisecond, Bandwidth: 7.5e7}
	cache := FormatLinks(topology.Links{Host: host, Site: site, WAN: wan, ReducePerByte: 1.5e-10})
	t.Run("cache", func(t *testing.T) {
		addr := testStore(t)
		worlds := joinAllOK(t, n, func(r int) []string { return rankEnv(t, addr, r, n, EnvLinks+"="+cache) })
		ls, from := requireSameLinks(t, worlds)
		require.Equal(t, [3]string{fromCache, fromCache, fromCache}, from)
		require.Equal(t, topology.Links{Host: host, Site: site, WAN: wan, ReducePerByte: 1.5e-10}, ls)
		v, err := worlds[0].life.kv.Get(context.Background(), LinksKey)
		require.NoError(t, err)
		require.Equal(t, cache, string(v), "the cache is kept for the next round")
	})
	t.Run("file", func(t *testing.T) {
		addr := testStore(t)
		file := filepath.Join(t.TempDir(), "topo.json")
		topo, err := topology.New([]topology.RankInfo{{Rank: 0, Host: "h0", Site: "a"}, {Rank: 1, Host: "h1", Site: "b"}})
		require.NoError(t, err)
		topo.Links = &topology.Links{Site: site, WAN: wan, Pairs: []topology.HostLink{{A: "h0", B: "h1", Link: *wan}}, ReducePerByte: 2e-10}
		data, err := topology.Marshal(topo)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(file, data, 0o644))
		worlds := joinAllOK(t, n, func(r int) []string {
			if r == 0 {
				return rankEnv(t, addr, r, n, EnvTopoFile+"="+file)
			}
			return rankEnv(t, addr, r, n, EnvTopoFile+"=/nonexistent/only-rank-0-reads-it.json")
		})
		ls, from := requireSameLinks(t, worlds)
		require.Equal(t, [3]string{fromDefault, fromFile, fromFile}, from, "the host level alone does not call for a probe")
		require.Nil(t, ls.Host)
		require.Equal(t, *wan, *ls.WAN)
		require.Len(t, ls.Pairs, 1)
		require.Equal(t, 2e-10, ls.ReducePerByte, "the file's reduce_per_byte")
	})
	t.Run("off", func(t *testing.T) {
		addr := testStore(t)
		worlds := joinAllOK(t, n, func(r int) []string { return rankEnv(t, addr, r, n, EnvProbe+"=0") })
		ls, from := requireSameLinks(t, worlds)
		require.Equal(t, [3]string{fromDefault, fromDefault, fromDefault}, from)
		require.Equal(t, topology.Links{}, ls)
		_, ok, err := worlds[0].life.kv.TryGet(context.Background(), LinksKey)
		require.NoError(t, err)
		require.False(t, ok, "nothing measured, nothing cached")
	})
}

// Four ranks of one host: no probe by default (Init stays fast);
// GOCOLL_PROBE=1 measures the host's level.
func TestProbeOneHost(t *testing.T) {
	const n = 4
	for _, tc := range []struct {
		env  []string
		from string
	}{{nil, fromDefault}, {[]string{EnvProbe + "=1"}, fromProbe}} {
		addr := testStore(t)
		worlds := joinAllOK(t, n, func(r int) []string { return oneHostEnv(t, addr, r, n, tc.env...) })
		ls, from := requireSameLinks(t, worlds)
		require.Equal(t, [3]string{tc.from, fromDefault, fromDefault}, from, "%v", tc.env)
		require.Equal(t, tc.from == fromProbe, ls.Host != nil)
		closeAll(t, worlds)
	}
}

// GOCOLL_PROBE must be alike on every rank: the world refuses to form,
// saying so on every rank.
func TestProbeMismatch(t *testing.T) {
	addr := testStore(t)
	const n = 2
	_, errs := joinAll(t, n, func(r int) []string { return rankEnv(t, addr, r, n, EnvProbe+"="+[]string{"0", "1"}[r]) })
	for r, err := range errs {
		require.ErrorContains(t, err, "GOCOLL_PROBE", "rank %d", r)
	}
}

// A bad GOCOLL_PROBE, GOCOLL_LINKS or GOCOLL_TOPO_FILE is a one-line error
// naming the variable.
func TestProbeBadSettings(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{EnvProbe + "=sometimes", EnvProbe},
		{EnvLinks + "=wan=2ms", "LEVEL=LATENCY@BANDWIDTH"},
		{EnvLinks + "=rack=2ms@1e9", `unknown level "rack"`},
		{EnvLinks + "=wan=2ms@-1", "a finite bandwidth >= 1"},
		{EnvLinks + "=wan=soon@1e9", "not a duration"},
		{EnvLinks + "=wan=2ms@1e9,wan=3ms@1e9", "given twice"},
		{EnvLinks + "=wan=2ms@1e9@-1e-9@5us", "CPU figures"},
		{EnvLinks + "=wan=2ms@1e9@1e-9", "CPU figures"},
		{EnvLinks + "=wan=2ms@1e9@1e-9@often", "CPU figures"},
	} {
		_, err := ParseEnv(LookupIn(rankEnv(t, "127.0.0.1:1", 0, 2, tc.env)))
		require.ErrorContains(t, err, tc.want, tc.env)
		require.NotContains(t, err.Error(), "\n", tc.env)
		if strings.HasPrefix(tc.env, EnvLinks) {
			require.ErrorContains(t, err, EnvLinks)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"version": 2, "ranks": [{"rank": 0, "host": "h0"}], "levels": {"wan": {"latency": "2ms", "bandwidth": -1}}}`), 0o644))
	addr := testStore(t)
	// Rank 0 alone reads the file; it publishes its failure in its record,
	// so every rank fails with it (not rank 1 at its timeout, an error
	// naming neither the file nor the field).
	_, errs := joinAll(t, 2, func(r int) []string { return rankEnv(t, addr, r, 2, EnvTopoFile+"="+bad, EnvConnectTimeout+"=20s") })
	for r, err := range errs {
		require.ErrorContains(t, err, "rank 0 cannot join: "+EnvTopoFile+": "+bad, "rank %d", r)
		require.ErrorContains(t, err, "levels.wan", "rank %d", r)
		require.NotContains(t, err.Error(), "\n", "rank %d", r)
	}

	// Alone (the other ranks never come), rank 0 still says why it could
	// not join, not only that they were missing.
	addr = testStore(t)
	_, err := Init(context.Background(), Options{Environ: rankEnv(t, addr, 0, 2, EnvTopoFile+"="+bad, EnvConnectTimeout+"=1s")})
	require.ErrorContains(t, err, "rank 0 cannot join: "+EnvTopoFile+": "+bad)

	// Rank 0 fails to write GOCOLL_TOPO_DUMP (as it would to put the
	// figures in the store): every rank fails with its error.
	addr = testStore(t)
	nowhere := filepath.Join(t.TempDir(), "no-such-dir", "dump.json")
	_, errs = joinAll(t, 2, func(r int) []string {
		return rankEnv(t, addr, r, 2, EnvTopoDump+"="+nowhere, EnvProbe+"=0", EnvConnectTimeout+"=20s")
	})
	for r, err := range errs {
		require.ErrorContains(t, err, "rank 0 could not save the link figures: "+EnvTopoDump+": open "+nowhere, "rank %d", r)
		require.NotContains(t, err.Error(), "\n", "rank %d", r)
	}

	// A link between hosts the job does not have: every rank refuses it.
	stranger := filepath.Join(t.TempDir(), "stranger.json")
	require.NoError(t, os.WriteFile(stranger, []byte(`{"version": 2, "ranks": [{"rank": 0, "host": "h0", "local_rank": 0}, {"rank": 1, "host": "hx", "local_rank": 0}],
		"links": [{"hosts": ["h0", "hx"], "latency": "2ms", "bandwidth": 1e8}]}`), 0o644))
	addr = testStore(t)
	_, errs = joinAll(t, 2, func(r int) []string { return rankEnv(t, addr, r, 2, EnvTopoFile+"="+stranger) })
	for r, err := range errs {
		require.ErrorContains(t, err, EnvTopoFile, "rank %d", r)
		require.ErrorContains(t, err, `links[0]: host "hx" is not a host of the topology`, "rank %d", r)
	}
}

// FormatLinks and ParseLinks round-trip, any duration is accepted.
func TestLinksText(t *testing.T) {
	ls := topology.Links{Host: &topology.Link{Latency: 7157, Bandwidth: 1.19e9},
		WAN: &topology.Link{Latency: 2380632, Bandwidth: 7.768e7, CPUPerByte: 4.75e-9, CPUPerMessage: 78444}}
	s := FormatLinks(ls)
	require.Equal(t, "host=7157ns@1.19e+09,wan=2380632ns@7.768e+07@4.75e-09@78444ns", s)
	back, err := ParseLinks(s)
	require.NoError(t, err)
	require.Equal(t, ls, back)
	ls.WAN.CPUPerByteBusy = 9.5e-9 // the busy CPU a byte, after the message's
	s = FormatLinks(ls)
	require.Equal(t, "host=7157ns@1.19e+09,wan=2380632ns@7.768e+07@4.75e-09@78444ns@9.5e-09", s)
	back, err = ParseLinks(s)
	require.NoError(t, err)
	require.Equal(t, ls, back)
	ls.WAN.LatencyBusy = 2510 * time.Microsecond // the busy latency, after the busy CPU a byte
	s = FormatLinks(ls)
	require.Equal(t, "host=7157ns@1.19e+09,wan=2380632ns@7.768e+07@4.75e-09@78444ns@9.5e-09@2510000ns", s)
	back, err = ParseLinks(s)
	require.NoError(t, err)
	require.Equal(t, ls, back)
	site := topology.Links{Site: &topology.Link{Latency: 9 * time.Microsecond, Bandwidth: 1e9, LatencyBusy: 130 * time.Microsecond}}
	s = FormatLinks(site) // a busy latency alone brings the CPU fields, zero
	require.Equal(t, "site=9000ns@1e+09@0@0ns@0@130000ns", s)
	back, err = ParseLinks(s)
	require.NoError(t, err)
	require.Equal(t, site, back)
	ls.WAN.LatencyCold = 2440 * time.Microsecond // the cold latency, after the busy one
	s = FormatLinks(ls)
	require.Equal(t, "host=7157ns@1.19e+09,wan=2380632ns@7.768e+07@4.75e-09@78444ns@9.5e-09@2510000ns@2440000ns", s)
	back, err = ParseLinks(s)
	require.NoError(t, err)
	require.Equal(t, ls, back)
	cold := topology.Links{Host: &topology.Link{Latency: 6 * time.Microsecond, Bandwidth: 1e10, LatencyCold: 61 * time.Microsecond}}
	s = FormatLinks(cold) // a cold latency alone brings the fields before it, zero
	require.Equal(t, "host=6000ns@1e+10@0@0ns@0@0ns@61000ns", s)
	back, err = ParseLinks(s)
	require.NoError(t, err)
	require.Equal(t, cold, back)
	_, err = ParseLinks("host=6us@1e10@0@0ns@0@0ns@-61us")
	require.ErrorContains(t, err, "COLD-LATENCY")
	ls.WAN.LatencyCold = 0
	_, err = ParseLinks("wan=2ms@1e8@4e-9@78us@-1")
	require.ErrorContains(t, err, "BUSY-SECONDS-A-BYTE")
	_, err = ParseLinks("wan=2ms@1e8@4e-9@78us@0@-3us")
	require.ErrorContains(t, err, "BUSY-LATENCY")
	for _, bad := range []string{"wan=2ms@0.5", "wan=2ms@1e-300", "wan=2h@1e8", "wan=-1ms@1e8"} {
		_, err = ParseLinks(bad) // the file's bounds (topology.MaxLatency, MinBandwidth)
		require.ErrorContains(t, err, "want a latency in [0, 1h0m0s] and a finite bandwidth >= 1 bytes per second", bad)
	}
	ls.ReducePerByte = 1.2e-10 // the reduction's CPU a byte, after the levels
	s = FormatLinks(ls)
	require.Equal(t, "host=7157ns@1.19e+09,wan=2380632ns@7.768e+07@4.75e-09@78444ns@9.5e-09@2510000ns,reduce=1.2e-10", s)
	back, err = ParseLinks(s)
	require.NoError(t, err)
	require.Equal(t, ls, back)
	require.Equal(t, "reduce=3e-10", FormatLinks(topology.Links{ReducePerByte: 3e-10}))
	for _, bad := range []string{"reduce=-1e-10", "reduce=0", "reduce=1", "reduce=fast", "reduce=1e-10,reduce=2e-10"} {
		_, err = ParseLinks(bad)
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "reduce", bad)
	}
	got, err := ParseLinks("site=25us@1.25e9")
	require.NoError(t, err)
	require.Equal(t, topology.Links{Site: &topology.Link{Latency: 25 * time.Microsecond, Bandwidth: 1.25e9}}, got)
}
