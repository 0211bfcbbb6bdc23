package bench

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// wanSplitRun writes a wan_trace.sh raw directory for one timed AllReduce
// of 100 ms (ranks 0 and 1 start 1 ms apart) whose WAN trace fills each
// direction's 4 links back to back from busyFrom to busyTo ms after the
// call's start, except from gapFrom to gapTo in direction 2, and runs
// bench/wan_split.sh on it with ITERS=1.
func wanSplitRun(t *testing.T, busyFrom, busyTo, gapFrom, gapTo float64) string {
	t.Helper()
	for _, tool := range []string{"bash", "awk", "zcat", "date"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("bench/wan_split.sh needs %s: %v", tool, err)
		}
	}
	dir := t.TempDir()
	start := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	line := func(rank, seq int, op string, bytes int, end time.Time, took time.Duration) {
		fmt.Fprintf(&out, "[rank %d] time=%s level=INFO msg=\"gocoll: coll\" rank=%d comm=1 seq=%d op=%s algo=x bytes=%d took=%.3fms\n",
			rank, end.Format("2006-01-02T15:04:05.000Z07:00"), rank, seq, op, bytes, float64(took)/1e6)
	}
	ms := time.Millisecond
	for r := range 2 {
		b := start.Add(time.Duration(r) * ms) // rank 1 starts 1 ms late
		line(r, 0, "Barrier", 0, b, ms)
		line(r, 1, "AllReduce", 16777216, start.Add(100*ms), start.Add(100*ms).Sub(b))
		line(r, 2, "Barrier", 0, start.Add(101*ms), ms)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "out"), out.Bytes(), 0o644))

	// The daemon started 1 s before the call; a 9000-byte packet takes
	// 9014 / 25e6 s = 0.36056 ms of a 200 Mbit/s link.
	var tr bytes.Buffer
	t0 := start.Add(-time.Second)
	fmt.Fprintf(&tr, "# start %d (Unix ns); queue length sport arrive due released (ns since start)\n", t0.UnixNano())
	pkt := 9014.0 / 25e6 * 1e3
	for _, q := range []int{257, 258, 259, 260, 513, 514, 515, 516} {
		for at := busyFrom; at+pkt <= busyTo+1e-9; at += pkt {
			if q > 512 && at+pkt > gapFrom && at < gapTo {
				continue
			}
			rel := int64(time.Second) + int64(at*1e6)
			fmt.Fprintf(&tr, "%d 9000 4000 %d %d %d\n", q, rel-2e6, rel, rel)
		}
	}
	f, err := os.Create(filepath.Join(dir, "trace.gz"))
	require.NoError(t, err)
	z := gzip.NewWriter(f)
	_, err = z.Write(tr.Bytes())
	require.NoError(t, err)
	require.NoError(t, z.Close())
	require.NoError(t, f.Close())

	// bench/schedsample's lines every 5 ms: the job ran 1.5 cores with 2
	// threads waiting through the first 10 ms, 0.5 cores after; the
	// daemons 0.1 cores throughout.
	var sched bytes.Buffer
	for at := 5; at <= 100; at += 5 {
		run, wait := 7.5, 10.0
		if at > 10 {
			run, wait = 2.5, 0
		}
		ns := start.Add(time.Duration(at) * ms).UnixNano()
		fmt.Fprintf(&sched, "%d job %d %d 12\n%d daemons %d 0 4\n", ns, int64(run*1e6), int64(wait*1e6), ns, int64(0.5e6))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sched"), sched.Bytes(), 0o644))

	cmd := exec.Command("bash", "wan_split.sh", dir)
	cmd.Env = append(os.Environ(), "ITERS=1", "SIZE=16777216", "RATE=200", "BIN_MS=2")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	return string(b)
}

// wanSplitCPU reads the start, middle and tail CPU figures (job run,
// job waiting, daemons run) of a mean cpu line of wan_split.sh.
func wanSplitCPU(t *testing.T, out string, dir int) [9]float64 {
	t.Helper()
	num := `([-0-9.]+)`
	part := num + `/` + num + ` ` + num
	re := regexp.MustCompile(fmt.Sprintf(`(?m)^mean of 1 timed calls, dir %d cpu .*: start %s \| middle %s \| tail %s$`, dir, part, part, part))
	m := re.FindStringSubmatch(out)
	require.NotNil(t, m, "no cpu line for dir %d in:\n%s", dir, out)
	var v [9]float64
	for i := range v {
		f, err := strconv.ParseFloat(m[i+1], 64)
		require.NoError(t, err)
		v[i] = f
	}
	return v
}

// wanSplitField reads one figure of a mean line of wan_split.sh.
func wanSplitField(t *testing.T, out string, dir int, name string) float64 {
	t.Helper()
	re := regexp.MustCompile(fmt.Sprintf(`(?m)^mean of 1 timed calls, dir %d: .*\b%s ([-0-9.]+)`, dir, name))
	m := re.FindStringSubmatch(out)
	require.NotNil(t, m, "no %s for dir %d in:\n%s", name, dir, out)
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return v
}

// TestWANSplitParts checks bench/wan_split.sh's parts on a trace whose
// links are known: idle for the call's first 10 ms (the call starts with
// rank 0), busy to 90 ms, and in direction 2 idle from 40 to 50 ms.
func TestWANSplitParts(t *testing.T) {
	out := wanSplitRun(t, 10, 90, 40, 50)
	for _, c := range []struct {
		dir       int
		name      string
		want, tol float64
	}{
		{1, "call", 100, 0.01},
		{1, "before", 10, 0.01},
		{1, "start", 10, 0.5}, // idle start: 10 ms
		{1, "middle", 0, 0.5},
		{1, "tail", 0, 0.5},
		{1, "after", 10, 0.5},
		{1, "rate", 80, 0.5},
		{2, "start", 10, 0.5},
		{2, "middle", 10, 0.8}, // the gap, to the packet
		{2, "rate", 70, 0.5},
	} {
		require.InDelta(t, c.want, wanSplitField(t, out, c.dir, c.name), c.tol, "dir %d %s:\n%s", c.dir, c.name, out)
	}
	// The start (0-10 ms) had the job's busy samples, the middle and the
	// tail the quiet ones.
	cpu := wanSplitCPU(t, out, 1)
	require.InDeltaSlice(t, []float64{1.5, 2, 0.1, 0.5, 0, 0.1}, cpu[:6], 0.06, "%v\n%s", cpu, out)
}

// TestWANSplitSettle checks settle, the part of the middle before the
// links settle: a first burst of 4 ms (10-14 ms) and a gap to 24 ms
// count in the middle and, the burst being under SETTLE_MS's 20 ms of
// full bins, in settle too, which lasts from 10 ms to the full run's
// first bin at 24 ms; a gap after 30 ms of full links (40-50 ms) counts
// in the middle only.
func TestWANSplitSettle(t *testing.T) {
	settleLen := func(out string, dir int) float64 {
		m := regexp.MustCompile(fmt.Sprintf(`(?m)^mean of 1 timed calls, dir %d: .*\bsettle [-0-9.]+ \[([-0-9.]+)\]`, dir)).FindStringSubmatch(out)
		require.NotNil(t, m, "no settle length for dir %d in:\n%s", dir, out)
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		return v
	}
	early := wanSplitRun(t, 10, 90, 14, 24)
	require.InDelta(t, 10, wanSplitField(t, early, 2, "middle"), 0.8, early)
	require.InDelta(t, 10, wanSplitField(t, early, 2, "settle"), 0.8, early)
	require.InDelta(t, 14, settleLen(early, 2), 0.01, early)
	require.InDelta(t, 0, wanSplitField(t, early, 1, "settle"), 0.01, early)
	require.InDelta(t, 0, settleLen(early, 1), 0.01, early)

	late := wanSplitRun(t, 10, 90, 40, 50)
	require.InDelta(t, 10, wanSplitField(t, late, 2, "middle"), 0.8, late)
	require.InDelta(t, 0, wanSplitField(t, late, 2, "settle"), 0.01, late)
	require.InDelta(t, 0, settleLen(late, 2), 0.01, late)
}
