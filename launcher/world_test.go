package launcher

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher/store"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
	"github.com/gocoll/gocoll/transport/shm"
)

const testJobKey = "test-job-key-0123456789"

// testStore serves a store on loopback for a test's ranks.
func testStore(t *testing.T) string {
	addr, _ := setUpStore(t)
	return addr
}

// freeAddr is a loopback address at which nothing listens (a port just
// freed), for a store a rank is to serve, or none.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// rankEnv is the environment of rank r of n, two ranks per host, hosts
// alternating between sites a and b.
func rankEnv(t *testing.T, storeAddr string, r, n int, extra ...string) []string {
	env := []string{
		EnvRank + "=" + strconv.Itoa(r), EnvWorldSize + "=" + strconv.Itoa(n),
		EnvLocalRank + "=" + strconv.Itoa(r%2), EnvHost + "=h" + strconv.Itoa(r/2),
		EnvSite + "=" + []string{"a", "b"}[(r/2)%2],
		EnvStore + "=" + storeAddr, EnvStoreServe + "=0", EnvJobKey + "=" + testJobKey,
		EnvJobID + "=" + t.Name(), EnvConnectTimeout + "=20s",
		// Ranks that share this test process must not refit its
		// GOMAXPROCS (procs_test.go tests the fitting).
		EnvGoMaxProcs + "=" + strconv.Itoa(runtime.GOMAXPROCS(0)),
	}
	return append(env, extra...)
}

// joinAll runs Init on n goroutines and returns the worlds by rank, or the
// errors.
func joinAll(t *testing.T, n int, envOf func(r int) []string) ([]*World, []error) {
	worlds, errs := make([]*World, n), make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			worlds[r], errs[r] = Init(context.Background(), Options{Environ: envOf(r)})
		})
	}
	wg.Wait()
	return worlds, errs
}

// joinAllOK is joinAll for worlds that must form; they are closed when
// the test ends.
func joinAllOK(t *testing.T, n int, envOf func(r int) []string) []*World {
	worlds, errs := joinAll(t, n, envOf)
	t.Cleanup(func() { closeAll(t, worlds) })
	for _, err := range errs {
		require.NoError(t, err)
	}
	return worlds
}

func closeAll(t *testing.T, worlds []*World) {
	var wg sync.WaitGroup
	for _, w := range worlds {
		if w != nil {
			wg.Go(func() { require.NoError(t, w.Close()) })
		}
	}
	wg.Wait()
}

func TestWorldFormsAndReduces(t *testing.T) {
	addr := testStore(t)
	const n = 4
	worlds := joinAllOK(t, n, func(r int) []string { return rankEnv(t, addr, r, n) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	results := make([][]int64, n)
	var wg sync.WaitGroup
	for r, w := range worlds {
		wg.Go(func() {
			x := []int64{int64(r), 1, int64(10 * r)}
			require.NoError(t, collective.AllReduce(ctx, w.Comm, x, x, collective.Sum))
			results[r] = x
		})
	}
	wg.Wait()
	for r := range n {
		require.Equal(t, []int64{6, 4, 60}, results[r])
	}
	w := worlds[3]
	if shm.Supported {
		// The default: shared memory within h0 and h1, MetaRoCE between.
		require.Equal(t, TransportSHMMetaRoCE, w.Job().Transport)
	}
	require.Equal(t, 3, w.Rank())
	require.Equal(t, n, w.Size())
	require.Equal(t, "b", w.Site())
	require.Equal(t, "h1", w.Host())
	require.Equal(t, 1, w.LocalRank())
	topo := w.Topology()
	require.Equal(t, []string{"a", "b"}, topo.Sites())
	commTopo, ok := w.Comm.Topology() // the communicator carries it too
	require.True(t, ok)
	require.Equal(t, topo, commTopo)
	require.Equal(t, "b", w.Comm.Site())
	require.Equal(t, []int{2, 3}, topo.RanksOnHost("h1"))
	ri, _ := topo.Rank(2)
	require.Equal(t, "127.0.0.1", ri.Addr)
	require.Equal(t, 0, ri.LocalRank)
	crossings, err := topology.SiteCrossings(topo, []int{0, 1, 2, 3})
	require.NoError(t, err)
	require.Equal(t, 2, crossings)
}

// Rank 0 serves the store itself, at a port the ranks agree on.
func TestWorldRankZeroServesStore(t *testing.T) {
	addr := freeAddr(t)
	const n = 3
	worlds, errs := joinAll(t, n, func(r int) []string {
		return rankEnv(t, addr, r, n, EnvStoreServe+"=1")
	})
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NotNil(t, worlds[0].life.srv)
	require.Nil(t, worlds[1].life.srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, w := range worlds {
		wg.Go(func() { require.NoError(t, w.Barrier(ctx)) })
	}
	wg.Wait()
	// Rank 0 closes first, and waits for the others' goodbyes before it
	// takes the store away.
	closed := make(chan error, 1)
	go func() { closed <- worlds[0].Close() }()
	select {
	case err := <-closed:
		t.Fatalf("rank 0 closed (%v) before the others said goodbye", err)
	case <-time.After(100 * time.Millisecond):
	}
	closeAll(t, worlds[1:])
	require.NoError(t, <-closed)
}

// A rank that stops heartbeating while its connections stay up is declared
// dead, and the others' pending AllReduce fails naming it, well before the
// collective's own deadline.
func TestSilentRankIsDeclaredDead(t *testing.T) {
	addr := testStore(t)
	const n, silent = 4, 3
	worlds, errs := joinAll(t, n, func(r int) []string {
		return rankEnv(t, addr, r, n, EnvHeartbeatTimeout+"=2s")
	})
	for _, err := range errs {
		require.NoError(t, err)
	}
	defer closeAll(t, worlds)
	worlds[silent].life.stopBeat()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	failures := make([]error, n)
	var wg sync.WaitGroup
	for r, w := range worlds {
		if r == silent {
			continue
		}
		wg.Go(func() {
			x := make([]float32, 1<<16)
			failures[r] = collective.AllReduce(ctx, w.Comm, x, x, collective.Sum)
		})
	}
	wg.Wait()
	require.Less(t, time.Since(start), 20*time.Second, "failed by the collective deadline, not the heartbeat")
	for r, err := range failures {
		if r == silent {
			continue
		}
		require.Error(t, err, "rank %d", r)
		require.Contains(t, err.Error(), "rank 3", "rank %d: %v", r, err)
		require.Contains(t, err.Error(), "no heartbeat for 2s (host h1)", "rank %d: %v", r, err)
	}
	// Later operations with the dead rank fail at once.
	err := collective.Send(ctx, worlds[0].Comm, []int32{1}, silent)
	require.Error(t, err)
	require.True(t, errors.Is(err, ErrNoHeartbeat), err.Error())
}

// When rank 0, which serves the store, vanishes without closing, the
// others learn it from the lost store and fail naming rank 0.
func TestLostStoreNamesRankZero(t *testing.T) {
	addr := freeAddr(t)
	const n = 3
	worlds, errs := joinAll(t, n, func(r int) []string {
		return rankEnv(t, addr, r, n, EnvStoreServe+"=1", EnvHeartbeatTimeout+"=1s")
	})
	for _, err := range errs {
		require.NoError(t, err)
	}
	defer closeAll(t, worlds[1:])
	defer func() { _ = worlds[0].life.guard.Close() }()
	worlds[0].life.stopBeat()
	_ = worlds[0].life.srv.Close() // rank 0's store vanishes; its transport stays up

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, w := range worlds[1:] {
		wg.Go(func() {
			x := []int32{1}
			err := collective.Broadcast(ctx, w.Comm, x, x, 0)
			require.Error(t, err)
			require.Contains(t, err.Error(), "rank 0")
			require.Contains(t, err.Error(), "store it serves")
		})
	}
	wg.Wait()
}

func TestJoinErrors(t *testing.T) {
	addr := testStore(t)
	t.Run("wrong job key", func(t *testing.T) {
		_, err := Init(context.Background(), Options{Environ: rankEnv(t, addr, 1, 2, EnvJobKey+"=wrong-job-key-0123456789")})
		require.Error(t, err)
		require.Contains(t, err.Error(), "refused this job's key (GOCOLL_JOB_KEY)")
		require.True(t, errors.Is(err, store.ErrBadJobKey))
		require.NotContains(t, err.Error(), "\n")
	})
	t.Run("missing rank", func(t *testing.T) {
		_, err := Init(context.Background(), Options{Environ: rankEnv(t, addr, 0, 2, EnvConnectTimeout+"=1500ms")})
		require.Error(t, err)
		require.Contains(t, err.Error(), `gocoll: rank 0 of 2 (gocoll): waiting for the other ranks`)
		require.Contains(t, err.Error(), "ranks [1] missing")
	})
	t.Run("rank claimed twice", func(t *testing.T) {
		env := rankEnv(t, addr, 0, 2, EnvConnectTimeout+"=2s")
		worlds, errs := joinAll(t, 2, func(int) []string { return env })
		defer closeAll(t, worlds)
		twice := 0
		for _, err := range errs {
			require.Error(t, err) // the first rank 0 times out waiting for rank 1
			if strings.Contains(err.Error(), "already joined job") {
				twice++
			}
		}
		require.Equal(t, 1, twice)
	})
	t.Run("no store", func(t *testing.T) {
		dead := freeAddr(t)
		_, err := Init(context.Background(), Options{Environ: rankEnv(t, dead, 1, 2, EnvConnectTimeout+"=200ms")})
		require.ErrorContains(t, err, "no store answered at "+dead)
	})
	t.Run("no environment", func(t *testing.T) {
		_, err := Init(context.Background(), Options{Environ: []string{"HOME=/"}})
		require.ErrorContains(t, err, "no launcher environment")
	})
	t.Run("transports differ", func(t *testing.T) {
		worlds, errs := joinAll(t, 2, func(r int) []string {
			return rankEnv(t, addr, r, 2, EnvTransport+"="+[]string{"tcp", "metaroce"}[r], EnvConnectTimeout+"=5s")
		})
		defer closeAll(t, worlds)
		// Both ranks see the mismatch; the first to see it leaves, and the
		// other fails with either its own finding or the first one's note,
		// whichever comes first.
		own := []string{
			"rank 1 uses transport metaroce, this one tcp (set GOCOLL_TRANSPORT alike everywhere)",
			"rank 0 uses transport tcp, this one metaroce (set GOCOLL_TRANSPORT alike everywhere)",
		}
		for r, err := range errs {
			require.Error(t, err, "rank %d", r)
			other := "rank " + strconv.Itoa(1-r) + ": left the job before the world formed: " + own[1-r]
			if !strings.Contains(err.Error(), own[r]) && !strings.Contains(err.Error(), other) {
				t.Fatalf("rank %d: %q names neither its own finding nor rank %d's note", r, err, 1-r)
			}
		}
	})
	t.Run("ranks disagree", func(t *testing.T) {
		worlds, errs := joinAll(t, 2, func(r int) []string {
			return rankEnv(t, addr, r, 2, EnvSite+"=s"+strconv.Itoa(r), EnvHost+"=same", EnvConnectTimeout+"=5s")
		})
		defer closeAll(t, worlds)
		for _, err := range errs {
			require.Error(t, err)
			require.Contains(t, err.Error(), `host "same" is on site "s0" (rank 0) and on site "s1"`)
		}
	})
}

// GOCOLL_TRANSPORT=metaroce builds the world over MetaRoCE (UDP), shm over
// shared memory, and auto over both: rankEnv puts ranks 0 and 1 on host h0
// and rank 2 on h1, so rank 0 reaches rank 1 through shared memory and rank
// 2 through MetaRoCE.
func TestWorldOverEachTransport(t *testing.T) {
	for _, tr := range []struct {
		name string
		used string // the transport in use
		want string // the endpoint's type
	}{
		{TransportMetaRoCE, TransportMetaRoCE, "*mrtransport.Endpoint"},
		{TransportSHM, TransportSHM, "*shm.Endpoint"},
		{TransportAuto, TransportSHMMetaRoCE, "*route.Endpoint"}, // the default
		{TransportSHMTCP, TransportSHMTCP, "*route.Endpoint"},
	} {
		t.Run(tr.name, func(t *testing.T) {
			if tr.used != TransportMetaRoCE && !shm.Supported {
				t.Skip("shared memory needs Linux; transports_other_test.go checks the fallback")
			}
			addr := testStore(t)
			const n = 3
			worlds := joinAllOK(t, n, func(r int) []string { return rankEnv(t, addr, r, n, EnvTransport+"="+tr.name) })
			sumRanks(t, worlds)
			require.Equal(t, tr.used, worlds[0].Job().Transport)
			require.Equal(t, tr.want, fmt.Sprintf("%T", worlds[0].life.guard.inner))
		})
	}
}

// sumRanks runs one AllReduce on every world at once and checks its sum.
func sumRanks(t *testing.T, worlds []*World) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n := int32(len(worlds))
	var wg sync.WaitGroup
	for r, w := range worlds {
		wg.Go(func() {
			x := []int32{int32(r), 100}
			require.NoError(t, collective.AllReduce(ctx, w.Comm, x, x, collective.Sum))
			require.Equal(t, []int32{n * (n - 1) / 2, 100 * n}, x)
		})
	}
	wg.Wait()
}

// Over auto across hosts, a mismatched call on one rank fails the
// operation on every rank, through shared memory and MetaRoCE alike, and
// the world stays usable.
func TestWorldAutoMismatch(t *testing.T) {
	addr := testStore(t)
	const n = 4 // hosts h0 (ranks 0, 1) and h1 (ranks 2, 3)
	worlds := joinAllOK(t, n, func(r int) []string { return rankEnv(t, addr, r, n, EnvTransport+"=auto") })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for r, w := range worlds {
		require.Equal(t, TransportSHMMetaRoCE, w.Job().Transport)
		wg.Go(func() {
			x := make([]int32, 1000)
			if r == 3 {
				x = x[:999]
			}
			require.Error(t, collective.AllReduce(ctx, w.Comm, x, x, collective.Sum), "rank %d", r)
			y := []int32{int32(r)}
			require.NoError(t, collective.AllReduce(ctx, w.Comm, y, y, collective.Sum), "rank %d", r)
			require.Equal(t, []int32{6}, y)
		})
	}
	wg.Wait()
}

func TestWorldOfOne(t *testing.T) {
	w, err := Init(context.Background(), Options{Environ: []string{
		EnvRank + "=0", EnvWorldSize + "=1", EnvStore + "=127.0.0.1:0", EnvJobID + "=" + t.Name(), EnvInsecure + "=1"}})
	require.NoError(t, err)
	x := []float64{2.5}
	require.NoError(t, collective.AllReduce(context.Background(), w.Comm, x, x, collective.Sum))
	require.Equal(t, []float64{2.5}, x)
	s := w.Store()
	require.NoError(t, s.Set(context.Background(), "k", []byte("v")))
	require.NoError(t, w.Close())
	require.NoError(t, w.Close())
	require.ErrorIs(t, w.Barrier(context.Background()), collective.ErrClosed)
}

func TestRecordChecks(t *testing.T) {
	mine := rankRecord{Version: 1, Size: 2, Transport: "tcp", Addr: "a:1",
		Info: topology.RankInfo{Rank: 0, Host: "h"}}
	enc := func(r rankRecord) []byte {
		b, err := encodeRecord(r)
		require.NoError(t, err)
		return b
	}
	other := mine
	other.Info.Rank, other.Info.LocalRank, other.Addr = 1, 1, "a:2"
	addrs, topo, err := checkRecords(mine, [][]byte{enc(mine), enc(other)})
	require.NoError(t, err)
	require.Equal(t, []string{"a:1", "a:2"}, addrs)
	require.Equal(t, 2, topo.Size())

	bad := map[string][]byte{
		"claims rank 0":           enc(mine),
		"world of 3 ranks":        enc(rankRecord{Version: 1, Size: 3, Transport: "tcp", Addr: "x", Info: topology.RankInfo{Rank: 1, Host: "h"}}),
		"uses transport metaroce": enc(rankRecord{Version: 1, Size: 2, Transport: "metaroce", Addr: "x", Info: topology.RankInfo{Rank: 1, Host: "h"}}),
		"version 2":               enc(rankRecord{Version: 2, Info: topology.RankInfo{Rank: 1}}),
		"unknown field":           []byte(`{"v":1,"bogus":1}`),
		"data after the object":   []byte(`{"v":1,"info":{"rank":1,"host":"h","local_rank":1}} {}`),
		"published no address":    enc(rankRecord{Version: 1, Size: 2, Transport: "tcp", Info: topology.RankInfo{Rank: 1, Host: "h"}}),
	}
	for want, v := range bad {
		_, _, err := checkRecords(mine, [][]byte{enc(mine), v})
		require.ErrorContains(t, err, want)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	good, _ := encodeRecord(rankRecord{Version: 1, Launcher: "gocoll", Size: 4, Transport: "tcp", Addr: "127.0.0.1:1",
		Info: topology.RankInfo{Rank: 2, Host: "h", Site: "s", LocalRank: 0, Addr: "127.0.0.1",
			NICs: []topology.NIC{{Name: "lo", Addrs: []string{"127.0.0.1/8"}, Up: true}}}})
	f.Add(good)
	f.Add([]byte(`{"v":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(2, b)
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		require.Equal(t, 2, r.Info.Rank)
		require.Equal(t, recordVersion, r.Version)
	})
}

// Only env.go reads the environment, in this package, its command and the
// module root.
func TestEnvironmentReadInOnePlace(t *testing.T) {
	for _, dir := range []string{".", "hosts", "job", "../cmd/gocoll", ".."} {
		files := goFiles(t, dir)
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") || filepath.Base(file) == "env.go" && dir == "." {
				continue
			}
			src := readFile(t, file)
			for _, call := range []string{"os.Getenv", "os.LookupEnv", "os.Environ", "syscall.Getenv", "os.ExpandEnv"} {
				require.False(t, strings.Contains(src, call), "%s calls %s; read the environment in launcher/env.go", file, call)
			}
		}
	}
}

func goFiles(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	return files
}

func readFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestNumberLocalRanks(t *testing.T) {
	infos := []topology.RankInfo{
		{Rank: 0, Host: "a", LocalRank: -1}, {Rank: 1, Host: "b", LocalRank: 0},
		{Rank: 2, Host: "a", LocalRank: -1}, {Rank: 3, Host: "b", LocalRank: 1},
		{Rank: 4, Host: "a", LocalRank: 0}, // known, but its host has unknowns: renumbered
	}
	numberLocalRanks(infos)
	var got []int
	for _, ri := range infos {
		got = append(got, ri.LocalRank)
	}
	require.Equal(t, []int{0, 0, 1, 1, 2}, got)
}

// GOCOLL_UDP_PORTS and GOCOLL_PATH_IFACES reach MetaRoCE's path sockets:
// every path binds a port of the range, on the address given.
func TestWorldUDPPortsAndInterfaces(t *testing.T) {
	addr := testStore(t)
	const n = 3
	worlds := joinAllOK(t, n, func(r int) []string {
		return rankEnv(t, addr, r, n, EnvTransport+"="+TransportMetaRoCE, EnvUDPPorts+"=40000-40999",
			EnvPathIfaces+"=127.0.0.1")
	})
	sumRanks(t, worlds)
	for r, w := range worlds {
		ep, ok := w.life.guard.inner.(*mrtransport.Endpoint)
		require.True(t, ok, "rank %d: %T", r, w.life.guard.inner)
		paths := ep.Addr().Paths
		require.Len(t, paths, mrtransport.DefaultPaths)
		for _, p := range paths {
			require.Equal(t, "127.0.0.1", p.Addr().String(), "rank %d", r)
			require.True(t, p.Port() >= 40000 && p.Port() <= 40999, "rank %d: port %d", r, p.Port())
		}
	}
}

// GOCOLL_PATHS reaches MetaRoCE: every rank opens that many path sockets,
// and each connection sprays over them.
func TestWorldPaths(t *testing.T) {
	addr := testStore(t)
	const n, paths = 2, 3
	worlds := joinAllOK(t, n, func(r int) []string {
		return rankEnv(t, addr, r, n, EnvTransport+"="+TransportMetaRoCE, EnvPaths+"=3")
	})
	sumRanks(t, worlds)
	for r, w := range worlds {
		ep, ok := w.life.guard.inner.(*mrtransport.Endpoint)
		require.True(t, ok, "rank %d: %T", r, w.life.guard.inner)
		require.Len(t, ep.Addr().Paths, paths, "rank %d", r)
		st := ep.Stats()
		require.Len(t, st.Peers, n-1, "rank %d", r) // no connection to itself
		require.Equal(t, 1-r, st.Peers[0].Rank)
		require.Len(t, st.Peers[0].Paths, paths, "rank %d", r)
	}
}
