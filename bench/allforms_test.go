package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport/inproc"
)

// -d all, -o all and -r all: every type, every op it has a kernel for,
// every rank as the root, each checked; collectives that do not reduce or
// have no root run once per type.
func TestAllTypesOpsRoots(t *testing.T) {
	const n = 3
	code, out, errOut := runBench(t, "allreduce,broadcast,allgather", "--transport", "inproc", "-np", fmt.Sprint(n),
		"--sizes", "1K", "-n", "1", "--json", "-d", "all", "-o", "all", "-r", "all")
	require.Equal(t, ExitOK, code, errOut)
	got := map[string]bool{}
	for _, r := range decodeRows(t, out) {
		requireRight(t, r, "")
		got[fmt.Sprintf("%s %s %s %d", r.Coll, r.Type, r.Redop, r.Root)] = true
	}
	want := map[string]bool{}
	for _, dt := range dtype.All() {
		for _, op := range reduce.Ops() {
			if _, err := reduce.Lookup(dt, op); err == nil {
				want[fmt.Sprintf("allreduce %s %s -1", dt, op)] = true
			}
		}
		for root := range n {
			want[fmt.Sprintf("broadcast %s none %d", dt, root)] = true
		}
		want[fmt.Sprintf("allgather %s none -1", dt)] = true
	}
	require.Equal(t, want, got)
	require.Greater(t, len(want), 3*len(dtype.All()), "-o all ran more than one op")

	// One "all" at a time leaves the others as given.
	code, out, errOut = runBench(t, "reduce", "--transport", "inproc", "-np", "2", "--sizes", "1K", "-n", "1", "--json", "-o", "all", "-d", "int32", "-r", "1")
	require.Equal(t, ExitOK, code, errOut)
	var ops []string
	for _, r := range decodeRows(t, out) {
		require.Equal(t, "int32", r.Type)
		require.Equal(t, 1, r.Root)
		if !strings.Contains(strings.Join(ops, ","), r.Redop) {
			ops = append(ops, r.Redop)
		}
	}
	require.Equal(t, []string{"sum", "prod", "min", "max", "avg"}, ops)
}

// -m M runs M calls per timed iteration, -z 0 issues them at once on
// buffers of their own, -z 1 one after the other; every form checks
// right. The flight record counts the calls.
func TestAggItersAndBlocking(t *testing.T) {
	for _, blocking := range []bool{false, true} {
		const n, agg, iters, warmup = 2, 3, 4, 1
		w, err := inproc.NewWorld(n)
		require.NoError(t, err)
		p := &plan{colls: []collKind{collAllReduce}, sizes: []int64{4096}, dts: []dtype.DataType{dtype.Float32},
			ops: []reduce.Op{reduce.Sum}, roots: []int{0}, agg: agg, blocking: blocking, iters: iters, warmup: warmup, checks: 1}
		var g errgroup.Group
		records := make([][]collective.OpRecord, n)
		wrong := make([]int64, n)
		for r, ep := range w.Endpoints() {
			g.Go(func() error {
				c, err := collective.New(ep, 0, collective.Config{})
				if err != nil {
					return err
				}
				m := &member{comm: c, plan: p}
				for range 2 * p.buffers() {
					buf := make([]byte, p.maxBytes(n))
					if len(m.sendBufs) == len(m.recvBufs) {
						m.sendBufs = append(m.sendBufs, buf)
					} else {
						m.recvBufs = append(m.recvBufs, buf)
					}
				}
				meas, err := m.measure(context.Background(), collAllReduce, testCase{dt: dtype.Float32, op: reduce.Sum, root: -1},
					collAllReduce.info().geometryFor(4096, dtype.Float32, n, false), outOfPlace)
				wrong[r] = meas.wrong
				records[r] = c.FlightRecord()
				return err
			})
		}
		require.NoError(t, g.Wait(), "blocking %v", blocking)
		wantBufs := agg
		if blocking {
			wantBufs = 1
		}
		require.Equal(t, wantBufs, p.buffers())
		for r := range n {
			require.Zero(t, wrong[r])
			calls := 0
			for _, rec := range records[r] {
				if rec.Kind == collective.KindAllReduce {
					calls++
				}
			}
			require.Equal(t, (warmup+iters)*agg+1, calls, "rank %d, blocking %v", r, blocking)
		}
	}
	// Through the command line, both forms check right.
	for _, z := range []string{"0", "1"} {
		code, out, errOut := runBench(t, "allreduce,sendrecv,alltoall,broadcast", "--transport", "inproc", "-np", "3",
			"--sizes", "1K,64K", "-n", "2", "--json", "-m", "4", "-z", z)
		require.Equal(t, ExitOK, code, errOut)
		for _, r := range decodeRows(t, out) {
			requireRight(t, r, "-z "+z)
		}
	}
}

func TestAllFormsFlags(t *testing.T) {
	o, err := ParseArgs([]string{"allreduce", "-d", "all", "-o", "all", "-r", "all", "-m", "8", "-z", "1", "-T", "30"})
	require.NoError(t, err)
	require.True(t, o.AllDataTypes)
	require.True(t, o.AllOps)
	require.True(t, o.AllRoots)
	require.Equal(t, 8, o.AggIters)
	require.Equal(t, 1, o.Blocking)
	require.Equal(t, 30*time.Second, o.Timeout)
	d := DefaultOptions()
	require.Equal(t, 1, d.AggIters)
	require.Equal(t, 0, d.Blocking)
	for args, want := range map[string]string{
		"-m 0":    "-m (agg_iters) 0 out of range [1, 64]",
		"-m 65":   "-m (agg_iters) 65 out of range [1, 64]",
		"-z 2":    "-z (blocking) 2 out of range [0, 1]",
		"-r any":  `flag -r: "any" is not a rank or all`,
		"-o most": `flag -o: unknown op "most" (want sum, prod, min, max, avg or all)`,
		"-T soon": `flag -T: "soon" is not a duration such as 30s or 5m, or a number of seconds`,
		"-T 0":    "--timeout 0s must be positive",
	} {
		_, err := ParseArgs(append([]string{"allreduce"}, strings.Fields(args)...))
		require.EqualError(t, err, want, args)
	}
	_, err = ParseArgs([]string{"allreduce", "-d", "most"})
	require.ErrorContains(t, err, ", all, or nccl-tests'")
}

// -T (nccl-tests' timeout, seconds) is --timeout: it reaches the
// communicator's Config.Timeout, which bounds every call.
func TestTimeoutFlagReachesConfig(t *testing.T) {
	o, err := ParseArgs([]string{"allreduce", "-T", "0.2", "--transport", "inproc", "-np", "2"})
	require.NoError(t, err)
	require.Equal(t, 200*time.Millisecond, commConfig(o).Timeout)
}

// requireRight fails unless both variants of row r were checked and right.
func requireRight(t *testing.T, r jsonRow, what string) {
	t.Helper()
	require.NotNil(t, r.Wrong, "%s %+v", what, r)
	require.Zero(t, *r.Wrong, "%s %+v", what, r)
	if r.InPlace != nil {
		require.NotNil(t, r.InPlace.Wrong, "%s %+v", what, r)
		require.Zero(t, *r.InPlace.Wrong, "%s %+v", what, r)
	}
}

// A size that runs long says how far its timed iterations are: in
// virtual time, calls of 300 ms over 10 s print nothing in the first
// progressAfter and then one line per progressEvery; calls that were
// short (thousands of them in no time) and then slow down (a stall, a
// peer descheduled) still get their lines (review A16, L2). Ranks without
// a progress (nil) print nothing.
func TestProgressLinesAtTheInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w strings.Builder
		start := time.Now()
		p := &progress{w: &w, start: start, last: start}
		for i := 1; i <= 100000; i++ { // short calls: no time passes
			p.iteration(collAllReduce, 8, i, 100000)
		}
		require.Empty(t, w.String(), "a run younger than progressAfter prints nothing")
		var at []time.Duration
		for i := 1; time.Since(start) < 10*time.Second; i++ {
			time.Sleep(300 * time.Millisecond)
			synctest.Wait() // the timer's function has run
			lines := strings.Count(w.String(), "\n")
			p.iteration(collAllReduce, 1<<30, i, 1000)
			if strings.Count(w.String(), "\n") > lines {
				at = append(at, time.Since(start))
			}
		}
		// Each line at the first call at least progressEvery after the
		// last (the first, progressAfter into the run): 2.1 s, 3.3 s, ...
		// 9.3 s.
		require.Len(t, at, 7, "lines at %v", at)
		require.GreaterOrEqual(t, at[0], progressAfter)
		require.Less(t, at[0], progressAfter+300*time.Millisecond)
		for k := 1; k < len(at); k++ {
			require.GreaterOrEqual(t, at[k]-at[k-1], progressEvery, "lines at %v", at)
			require.Less(t, at[k]-at[k-1], progressEvery+300*time.Millisecond, "lines at %v", at)
		}
		require.Regexp(t, `^# gocoll bench: allreduce 1073741824 B: timed iteration \d+ of 1000, 2\.\d s\n`, w.String())
		p.timer.Stop()
	})
	var none *progress
	none.iteration(collAllReduce, 1, 1, 1)
}

// The timed loop reads no clock per call: one read, at its first call,
// arms the timer; then only the timer's firing makes it read again.
func TestProgressReadsNoClockPerCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w strings.Builder
		reads := 0
		start := time.Now()
		p := &progress{w: &w, start: start, last: start, now: func() time.Time { reads++; return time.Now() }}
		for i := 1; i <= 100000; i++ {
			p.iteration(collBroadcast, 8, i, 100000)
		}
		require.Equal(t, 1, reads, "clock reads in 100000 back-to-back calls")
		time.Sleep(progressAfter)
		synctest.Wait()
		for i := 1; i <= 100000; i++ {
			p.iteration(collBroadcast, 8, i, 100000)
		}
		require.Equal(t, 2, reads, "clock reads once the first line was due")
		require.Equal(t, 1, strings.Count(w.String(), "\n"), w.String())
		p.timer.Stop()
	})
}
