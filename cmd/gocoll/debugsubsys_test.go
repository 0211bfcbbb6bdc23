package main

import (
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// GOCOLL_DEBUG=info: each rank prints its GOMAXPROCS change, the
// transport to each peer with the chunk sizes, the board's limits (every
// peer on shm) and kernels, and, at a
// normal close (over shared memory and MetaRoCE), its traffic without an
// error. GOCOLL_DEBUG_SUBSYS=COLL
// prints one line per collective (algorithm and time) and nothing else;
// the default leaves COLL out. A bad subsystem is one line from the
// launcher.
func TestDebugSubsystems(t *testing.T) {
	info := runFor(t, time.Minute, []string{"GOCOLL_DEBUG=info"}, bins.gocoll, "run", "-np", "2", "--", bins.collcheck)
	require.Equal(t, 0, info.code, info.stderr)
	for r := range 2 {
		p := `\[rank ` + string(rune('0'+r)) + `\] time=\S+ level=INFO msg=`
		if _, set := os.LookupEnv("GOMAXPROCS"); !set && runtime.GOMAXPROCS(0) >= 2 {
			require.Regexp(t, p+`"gocoll: GOMAXPROCS fitted to this host's ranks" rank=\d from=\d+ to=\d+\n`, info.stderr)
		}
		require.Regexp(t, p+`"gocoll: transport per peer" rank=\d peers="shm=\d" chunk=\S+ small=\S+ board="allreduce<=\S+ broadcast<=\S+ alltoall<=\S+/peer" kernels=\w+\n`, info.stderr)
		require.Regexp(t, p+`"gocoll: traffic" rank=\d peer=\d transport=shm sent=\S+ recv=\S+\n`, info.stderr)
	}
	require.NotContains(t, info.stderr, "err=")
	require.NotContains(t, info.stderr, "gocoll: coll")

	// Over MetaRoCE too, a peer that closes first is a normal end: no
	// "connection closed ... err=" line at info.
	mr := runFor(t, time.Minute, []string{"GOCOLL_DEBUG=info", "GOCOLL_TRANSPORT=metaroce"}, bins.gocoll, "run", "-np", "3", "--", bins.collcheck)
	require.Equal(t, 0, mr.code, mr.stderr)
	require.Regexp(t, `\[rank 0\] time=\S+ level=INFO msg="gocoll: traffic" rank=0 peer=1 transport=metaroce `, mr.stderr)
	require.NotContains(t, mr.stderr, "err=", mr.stderr)

	coll := runFor(t, time.Minute, []string{"GOCOLL_DEBUG=info", "GOCOLL_DEBUG_SUBSYS=COLL"}, bins.gocoll, "run", "-np", "2", "--", bins.collcheck)
	require.Equal(t, 0, coll.code, coll.stderr)
	line := regexp.MustCompile(`^\[rank (\d)\] time=\S+ level=INFO msg="gocoll: coll" rank=(\d) comm=\d+ seq=\d+ op=(\S+) algo=([\w-]+) bytes=\d+( root=\d+)? took=[\d.]+[µm]?s$`)
	n := 0
	algos := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(coll.stderr), "\n") {
		m := line.FindStringSubmatch(l)
		require.NotNil(t, m, "line %q", l)
		require.Equal(t, m[1], m[2])
		algos[m[4]] = true
		n++
	}
	require.GreaterOrEqual(t, n, 10)
	require.Greater(t, len(algos), 1, "lines name the algorithm chosen")

	bad := runFor(t, time.Minute, []string{"GOCOLL_DEBUG=info", "GOCOLL_DEBUG_SUBSYS=GRAPH"}, bins.gocoll, "run", "-np", "2", "--", bins.collcheck)
	require.Equal(t, exitUsage, bad.code)
	require.Equal(t, 1, strings.Count(bad.stderr, "\n"), bad.stderr)
	require.Contains(t, bad.stderr, `unknown subsystem "GRAPH"`)
}
