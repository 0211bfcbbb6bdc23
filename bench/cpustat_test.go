package bench

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
)

func TestParseCPUStat(t *testing.T) {
	const rest = "cpu0 1 2 3 4 5 6 7 8 0 0\nintr 1 2\n"
	for _, c := range []struct {
		name, in     string
		ok           bool
		total, steal uint64
	}{
		{"linux 6", "cpu  1015930 14 228919 5369673 2727 0 16556 32505 0 0\n" + rest, true, 6666324, 32505},
		{"guest counted in user", "cpu  100 0 0 0 0 0 0 5 40 40\n", true, 105, 5},
		{"eight fields", "cpu 1 2 3 4 5 6 7 8\n", true, 36, 8},
		{"future fields", "cpu 1 2 3 4 5 6 7 8 9 10 11 12\n", true, 36, 8},
		{"tabs", "cpu\t1\t2\t3\t4\t5\t6\t7\t8\n", true, 36, 8},
		{"no steal (before 2.6.11)", "cpu  1 2 3 4 5 6 7\n", false, 0, 0},
		{"empty", "", false, 0, 0},
		{"no newline: cut off", "cpu  1 2 3 4 5 6 7 8", false, 0, 0},
		{"per-CPU line first", rest, false, 0, 0},
		{"not a number", "cpu  1 2 3 x 5 6 7 8\n", false, 0, 0},
		{"negative", "cpu  1 2 3 -4 5 6 7 8\n", false, 0, 0},
		{"plus sign", "cpu  1 2 3 +4 5 6 7 8\n", false, 0, 0},
		{"field past 2^64", "cpu  18446744073709551616 0 0 0 0 0 0 0\n", false, 0, 0},
		{"sum past 2^64", "cpu  18446744073709551615 1 0 0 0 0 0 0\n", false, 0, 0},
		{"sum 2^64-1", "cpu  18446744073709551614 1 0 0 0 0 0 0\n", true, 1<<64 - 1, 0},
		{"cpux", "cpux 1 2 3 4 5 6 7 8\n", false, 0, 0},
		{"leading blank line", "\ncpu 1 2 3 4 5 6 7 8\n", false, 0, 0},
	} {
		got, ok := parseCPUStat([]byte(c.in))
		require.Equal(t, c.ok, ok, c.name)
		require.Equal(t, cpuTimes{total: c.total, steal: c.steal}, got, c.name)
	}
}

// FuzzParseCPUStat: any bytes give times or false, never a panic, and
// steal is part of the total.
func FuzzParseCPUStat(f *testing.F) {
	for _, s := range []string{"cpu  1015930 14 228919 5369673 2727 0 16556 32505 0 0\ncpu0 1\n",
		"cpu 1 2 3 4 5 6 7 8\n", "cpu 1 2 3 4 5 6 7\n", "", "cpu\n", "cpu  18446744073709551615 1 0 0 0 0 0 0\n",
		"cpu 1 2 3 4 5 6 7 8"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := parseCPUStat(b)
		if !ok {
			require.Zero(t, got)
			return
		}
		require.LessOrEqual(t, got.steal, got.total)
		require.True(t, bytes.HasPrefix(b, []byte("cpu")))
	})
}

func TestStealOver(t *testing.T) {
	a := cpuTimes{total: 1000, steal: 100}
	require.Equal(t, stealShare{pct: 25, ticks: 10, cpuTicks: 40}, stealOver(a, cpuTimes{total: 1040, steal: 110}, true))
	require.Equal(t, stealShare{pct: 0, ticks: 0, cpuTicks: stealMinTicks}, stealOver(a, cpuTimes{total: 1000 + stealMinTicks, steal: 100}, true))
	require.Equal(t, stealShare{pct: -1, ticks: 1, cpuTicks: 4}, stealOver(a, cpuTimes{total: 1004, steal: 101}, true), "too short to tell")
	require.Equal(t, stealShare{pct: -1, ticks: 0, cpuTicks: 0}, stealOver(a, a, true))
	require.Equal(t, stealUnknown, stealOver(a, cpuTimes{total: 2000, steal: 200}, false))
	require.Equal(t, stealUnknown, stealOver(a, cpuTimes{total: 999, steal: 100}, true), "total ran backwards")
	require.Equal(t, stealUnknown, stealOver(a, cpuTimes{total: 1100, steal: 99}, true), "steal ran backwards")
	require.Equal(t, stealUnknown, stealOver(a, cpuTimes{total: 1010, steal: 150}, true), "more steal than time")
}

func TestReadCPUTimes(t *testing.T) {
	got, ok := readCPUTimes()
	if runtime.GOOS != "linux" {
		require.False(t, ok)
		return
	}
	require.True(t, ok, "this Linux has a /proc/stat")
	require.Positive(t, got.total)
}

// stealRow is an allreduce result at size bytes with the given steal
// shares out of place and in place.
func stealRow(size int64, oop, ip stealShare) result {
	r := result{coll: collAllReduce, geo: geometry{bytes: size, count: size / 4}, dt: dtype.Float32, op: reduce.Sum,
		root: -1, ranks: 2, rssPeak: 1 << 20}
	r.meas[outOfPlace] = measurement{ran: true, timeUs: 1000, steal: oop}
	r.meas[inPlace] = measurement{ran: true, timeUs: 1000, steal: ip}
	return r
}

// tableFooter writes rows through ncclReport and returns what follows the
// Peak RSS line.
func tableFooter(t *testing.T, rows ...result) string {
	t.Helper()
	var b bytes.Buffer
	rep := newReporter(&b, runInfo{opts: DefaultOptions(), ranks: 2, placement: "processes"})
	require.NoError(t, rep.begin())
	for _, r := range rows {
		require.NoError(t, rep.row(r))
	}
	require.NoError(t, rep.end(summary{rssByRank: []int64{1 << 20, 1 << 20}}))
	before, after, ok := strings.Cut(b.String(), "# Peak RSS per rank (MiB) : 1.0 1.0\n")
	require.True(t, ok, b.String())
	if len(rows) > 0 {
		require.Contains(t, before, "# Out of bounds values : 0 OK\n# Avg bus bandwidth : ", "the other footers stay")
	}
	return after
}

func TestStealFooter(t *testing.T) {
	share := func(steal, total float64) stealShare { // as stealOver computes it
		s := stealShare{pct: -1, ticks: steal, cpuTicks: total}
		if total >= stealMinTicks {
			s.pct = 100 * steal / total
		}
		return s
	}
	quiet := share(1, 100)
	require.Equal(t, "# CPU stolen by the hypervisor in timed loops : 1 % average, 1 % worst (allreduce at 1048576 B)\n",
		tableFooter(t, stealRow(1<<20, quiet, quiet)))

	// 3 % over the whole run, 41 % in one loop: a warning.
	require.Equal(t, "# CPU stolen by the hypervisor in timed loops : 3 % average, 41 % worst (allreduce at 16777216 B in place)\n"+
		"# WARNING: more than 10 % of the CPU was stolen: these figures are unreliable; rerun on a quiet host\n",
		tableFooter(t, stealRow(1<<20, share(0, 500), share(0, 500)), stealRow(16<<20, share(6, 200), share(41, 100)),
			stealRow(32<<20, share(0, 500), share(22, 500)))) // 69 of 2300 ticks

	// Short loops do not tell one by one, but add up.
	require.Equal(t, "# CPU stolen by the hypervisor in timed loops : 20 % average (no loop had the 20 ticks of host CPU time needed to tell it alone)\n"+
		"# WARNING: more than 10 % of the CPU was stolen: these figures are unreliable; rerun on a quiet host\n",
		tableFooter(t, stealRow(1<<20, share(1, 10), share(3, 10))))
	require.Equal(t, "# CPU stolen by the hypervisor in timed loops : unknown, the loops were too short (9 ticks of host CPU time in /proc/stat, 20 needed; raise -n)\n",
		tableFooter(t, stealRow(1<<20, share(1, 4), share(3, 5))))

	// Nothing when no rank could read /proc/stat.
	require.Empty(t, tableFooter(t, stealRow(1<<20, stealUnknown, stealUnknown)))
	require.Empty(t, tableFooter(t))
}

func TestStealJSON(t *testing.T) {
	var b bytes.Buffer
	rep := newReporter(&b, runInfo{opts: Options{JSON: true, Check: 1}, ranks: 2})
	require.NoError(t, rep.row(stealRow(1<<20, stealShare{pct: 100.0 / 3, ticks: 10, cpuTicks: 30}, stealShare{pct: -1, ticks: 1, cpuTicks: 3})))
	require.NoError(t, rep.row(stealRow(1<<20, stealUnknown, stealUnknown)))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 2)
	var m []map[string]any
	for _, l := range lines {
		var x map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &x))
		m = append(m, x)
	}
	require.Equal(t, 33.3, m[0]["steal_pct"])
	require.Contains(t, m[0]["in_place"], "steal_pct")
	require.Nil(t, m[0]["in_place"].(map[string]any)["steal_pct"], "too short: null")
	require.Contains(t, m[1], "steal_pct")
	require.Nil(t, m[1]["steal_pct"], "unknown: null")
	rows := decodeRows(t, b.String())
	require.Equal(t, 33.3, *rows[0].StealPct)
}

// TestStealPeers: the peers report puts the steal line next to the RSS
// line, "# " lines that bench/plot and summarize.py skip, before "## end".
func TestStealPeers(t *testing.T) {
	var b bytes.Buffer
	o := DefaultOptions()
	o.Format = "peers"
	rep := newReporter(&b, runInfo{opts: o, ranks: 2})
	require.NoError(t, rep.begin())
	require.NoError(t, rep.row(stealRow(1<<20, stealShare{pct: 50, ticks: 20, cpuTicks: 40}, stealShare{})))
	require.NoError(t, rep.end(summary{rssByRank: []int64{1 << 20, 1 << 20}}))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Equal(t, []string{
		"# Peak RSS per rank (MiB) : 1.0 1.0",
		"# CPU stolen by the hypervisor in timed loops : 50 % average, 50 % worst (allreduce at 1048576 B)",
		"# WARNING: more than 10 % of the CPU was stolen: these figures are unreliable; rerun on a quiet host",
		"## end label=gocoll n=2 all_correct=yes",
	}, lines[len(lines)-4:])
}

// TestStealCombined: a real run over inproc carries a steal share, known
// or not, through combine into every JSON object.
func TestStealCombined(t *testing.T) {
	code, out, errOut := runBench(t, "allreduce", "--transport", "inproc", "-np", "2", "--sizes", "64,1K", "-n", "2", "--json")
	require.Equal(t, ExitOK, code, errOut)
	for _, r := range decodeRows(t, out) {
		for _, p := range []*float64{r.StealPct, r.InPlace.StealPct} {
			if p != nil {
				require.True(t, *p >= 0 && *p <= 100, "%v", *p)
			}
		}
	}
	code, out, errOut = runBench(t, "allreduce", "--transport", "inproc", "-np", "2", "--sizes", "64", "-n", "1")
	require.Equal(t, ExitOK, code, errOut)
	if runtime.GOOS == "linux" {
		require.Contains(t, out, "# CPU stolen by the hypervisor in timed loops : ")
	}
}
