//go:build linux

package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/lab"
	"github.com/gocoll/gocoll/launcher"
)

// 2 sites x 2 hosts x 2 ranks in a lab, the hierarchical AllReduce forced
// (GOCOLL_ALGO): every sum exact (collcheck -mode loop checks each
// element), every rank's AllReduce ran as hierarchical, and the WAN
// carried what the algorithm says. Each of the 8 ranks owns a shard of
// S/4 after the reduce-scatters in its host and its site, and all-reduces
// it with its counterpart in the other site (S/8 each way for the
// reduce-scatter, S/8 for the all-gather): so each rank receives S/4 per
// AllReduce from one rank of the other site, and nothing else of note
// from that site, and each direction of the WAN carries S per AllReduce,
// against 1.75 S through one connection for the flat ring of 8 (whose
// only crossers would be ranks 3 and 7).
func TestHierarchicalAllReduceInLab(t *testing.T) {
	l := upLab(t, lab.Spec{Sites: 2, HostsPerSite: 2, Paths: 4, MTU: 9000})
	const (
		count  = 1 << 20 // float32s: S = 4 MiB
		s      = 4 * count
		rounds = 2
	)
	ctx := context.Background()
	before, err := l.Stats(ctx)
	require.NoError(t, err)
	o := gocollRun(t, 2*time.Minute, "--hostfile", writeLabHostfile(t, l), "--rsh", "ip netns exec {host}",
		"-x", launcher.EnvHeartbeatTimeout+"=10s", "-x", launcher.EnvAlgo+"=allreduce:hierarchical",
		"-x", launcher.EnvDebug+"=info", "-x", launcher.EnvDebugSubsys+"=NET,COLL",
		"-x", launcher.EnvProbe+"=0", // the link probe's bulk transfers would count in the traffic below
		"--", bins.collcheck, "-mode", "loop", "-count", strconv.Itoa(count), "-rounds", strconv.Itoa(rounds))
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	after, err := l.Stats(ctx)
	require.NoError(t, err)
	t.Logf("gocoll run stderr:\n%s", o.stderr)
	for r := range 8 {
		require.Contains(t, o.stdout, fmt.Sprintf("[rank %d] rank %d: %d rounds ok\n", r, r, rounds))
	}

	// Every rank's AllReduces of S bytes ran as hierarchical.
	coll := regexp.MustCompile(`(?m)^\[rank (\d)\] .*msg="gocoll: coll" .* op=(\w+) algo=([\w-]+) bytes=(\d+)`)
	algos := map[int][]string{}
	for _, m := range coll.FindAllStringSubmatch(o.stderr, -1) {
		r, _ := strconv.Atoi(m[1])
		if strings.EqualFold(m[2], "allreduce") && m[4] == strconv.Itoa(s) {
			algos[r] = append(algos[r], m[3])
		}
	}
	for r := range 8 {
		require.Equal(t, []string{"hierarchical", "hierarchical"}, algos[r], "rank %d's AllReduces of %d bytes", r, s)
	}

	// Each rank received about S/4 per round from the other site, nearly
	// all from one rank there, its counterpart.
	hosts := l.Hosts()
	site := func(r int) int { return hosts[r/2].Site } // ranks are numbered site by site
	recv := trafficRecv(t, o.stderr)
	want := float64(rounds * s / 4)
	for r := range 8 {
		t.Logf("rank %d received, by peer: %v", r, recv[r])
	}
	partner := map[int]int{}
	for r := range 8 {
		total, top, topPeer := 0.0, 0.0, -1
		for p, b := range recv[r] {
			if site(p) == site(r) {
				continue
			}
			total += b
			if b > top {
				top, topPeer = b, p
			}
		}
		require.InDelta(t, want, total, 0.1*want, "rank %d: bytes received from the other site (%v)", r, recv[r])
		require.Greater(t, top, 0.95*total, "rank %d: from its counterpart %d, of all from the other site (%v)", r, topPeer, recv[r])
		partner[r] = topPeer
	}
	for r, p := range partner { // counterparts pair up, one to one
		require.Equal(t, r, partner[p], "rank %d's counterpart is %d, whose is %d", r, p, partner[p])
	}

	// The WAN's counters: each direction carried at least S per round,
	// and less than 1.5 S with the packets' headers and the other
	// direction's acknowledgements (the flat ring's 1.75 S is more even
	// without them).
	wan := map[lab.Dir]float64{}
	for i, a := range after {
		require.Equal(t, before[i].Path, a.Path)
		wan[a.Dir] += float64(a.TxBytes - before[i].TxBytes)
		t.Logf("%v %v: %d bytes", a.Path, a.Dir, a.TxBytes-before[i].TxBytes)
	}
	require.Len(t, wan, 2)
	for d, b := range wan {
		require.GreaterOrEqual(t, b, float64(rounds*s), "WAN %v", d)
		require.Less(t, b, 1.5*float64(rounds*s), "WAN %v", d)
	}
}

// trafficLine is a rank's traffic with one peer, logged at close under
// GOCOLL_DEBUG=info (launcher.logStats).
var trafficLine = regexp.MustCompile(`(?m)^\[rank (\d+)\] .*msg="gocoll: traffic" rank=\d+ peer=(\d+) transport=\S+ sent=([\d.]+)([KMGT]?i?B)/\d+ recv=([\d.]+)([KMGT]?i?B)/\d+`)

// trafficRecv returns, by rank and peer, the bytes the rank received from
// the peer, as the traffic lines print them (to a tenth of their unit):
// the larger of the rank's count of bytes received and the peer's of
// bytes sent. A rank whose peer closed first logs zeros for that peer (its
// counters went with the connection), but of two ranks one logs before
// either closes, so one of the two counts is whole.
func trafficRecv(t *testing.T, stderr string) map[int]map[int]float64 {
	t.Helper()
	units := map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
	size := func(v, unit string) float64 {
		f, err := strconv.ParseFloat(v, 64)
		require.NoError(t, err)
		u, ok := units[unit]
		require.True(t, ok, "unit %q", unit)
		return f * u
	}
	got := map[int]map[int]float64{}
	add := func(to, from int, b float64) {
		if got[to] == nil {
			got[to] = map[int]float64{}
		}
		got[to][from] = max(got[to][from], b)
	}
	lines := 0
	for _, m := range trafficLine.FindAllStringSubmatch(stderr, -1) {
		r, _ := strconv.Atoi(m[1])
		p, _ := strconv.Atoi(m[2])
		add(p, r, size(m[3], m[4]))
		add(r, p, size(m[5], m[6]))
		lines++
	}
	require.Equal(t, 8*7, lines, "traffic lines")
	return got
}
