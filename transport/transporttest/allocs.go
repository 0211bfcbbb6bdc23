package transporttest

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
)

// CollectiveAllocs measures, for each 8-byte collective (AllReduce,
// Broadcast, Reduce, AllGather, AllToAll, Barrier) and for a 2 KiB
// AllReduce ("AllReduce 2 KiB": more than one shm slot, with the header in
// one message), an 8 KiB Broadcast ("Broadcast 8 KiB": beyond shm's
// EagerMax, copied by the receiver), an 8 KiB AllToAll ("AllToAll 8
// KiB", 8 KiB / n a pair), a 64 KiB AllReduce and AllToAll (each
// message a shm rendezvous) and a 256 KiB AllToAll ("AllToAll 256 KiB":
// 64 KiB a pair over 4 ranks, blocks pairwise, each taken with its
// header on shm: RecvHead), the allocations per
// call over the n ranks world returns, all ranks together
// (testing.AllocsPerRun counts the whole process), after a warm-up, and
// fails t above perRank*n for the collectives listed in max (by name; the
// others are only logged): requests, messages, queues, held messages and
// header buffers are to be reused, not allocated (issue 17: zero in steady
// state). AllocsPerRun reports whole allocations per run, rounded down, so
// zero means fewer than one per call over all ranks together: a garbage
// collection that empties a sync.Pool costs a few, once; anything that
// allocates on every call fails. Each call's result is checked after the
// runs. world builds a fresh world for each collective (and closes it with
// t.Cleanup).
func CollectiveAllocs(t *testing.T, n int, world func(t *testing.T, n int) []transport.Endpoint, perRank map[string]int) {
	t.Helper()
	if raceOn {
		t.Skip("the race detector makes sync.Pool drop objects: allocation counts mean nothing")
	}
	if testing.Short() {
		t.Skip("a few thousand collectives; not in -short")
	}
	for _, tc := range allocsCases(n) {
		t.Run(tc.name, func(t *testing.T) {
			most, bounded := perRank[tc.name]
			runs := logRuns
			if bounded {
				runs = boundRuns
			}
			allocs := measureAllocs(t, world(t, n), tc, runs)
			if bounded && allocs > float64(most*n) {
				t.Errorf("%.2f allocations per %s (8 bytes unless said) over %d ranks, want at most %d (%d a rank)", allocs, tc.name, n, most*n, most)
			}
		})
	}
}

// boundRuns and logRuns are the measured calls of a case perRank bounds
// and of one whose figure is only logged (its results still checked), each
// after a tenth as many to warm up.
const boundRuns, logRuns = 2000, 200

// ZeroAllocsBut returns bounds for CollectiveAllocs: zero allocations a
// rank for every collective it makes, but those named in some, bounded
// there.
func ZeroAllocsBut(some map[string]int) map[string]int {
	perRank := make(map[string]int)
	for _, tc := range allocsCases(1) {
		perRank[tc.name] = 0
	}
	maps.Copy(perRank, some)
	return perRank
}

// allocsCase is one collective call of TestCollectiveAllocs: call runs it
// on rank r; check reports a wrong result on rank r after the runs.
type allocsCase struct {
	name  string
	call  func(ctx context.Context, c *collective.Comm, r int) error
	check func(r int) error
}

// treeCfg forces the trees, in chunks of 4 KiB, for the cases whose name
// ends in " tree": each rank waits for the first of its two trees' next
// receives (the collective's awaitAny).
var treeCfg = collective.Config{AllReduce: collective.AlgoTree, Broadcast: collective.AlgoTree, ChunkBytes: collective.ChunkBytesMin}

// config is the communicator's configuration for case name.
func config(name string) collective.Config {
	if strings.HasSuffix(name, " tree") {
		return treeCfg
	}
	return collective.Config{}
}

// allocsCases returns the collectives of CollectiveAllocs over n ranks:
// each rank's buffers are made once, before the runs.
func allocsCases(n int) []allocsCase {
	mk := func(per int) [][]float32 {
		b := make([][]float32, n)
		for r := range b {
			b[r] = make([]float32, per)
		}
		return b
	}
	arS, arR := mk(2), mk(2)
	arS2, arR2 := mk(512), mk(512)
	bc8 := mk(2048)
	aaS8, aaR8 := mk(2048), mk(2048)
	bc := mk(2)
	arS64, arR64 := mk(16384), mk(16384)
	bc64 := mk(16384)
	aaS64, aaR64 := mk(16384), mk(16384)
	aaS256, aaR256 := mk(65536), mk(65536)
	rdS, rdR := mk(2), mk(2)
	agS, agR := mk(1), mk(n)
	aaS, aaR := mk(n), mk(n)
	for r := range n {
		arS[r][0], arS[r][1] = 1, float32(r)
		arS2[r][0], arS2[r][511] = 1, float32(r)
		arS64[r][0], arS64[r][16383] = 1, float32(r)
		rdS[r][0], rdS[r][1] = 1, float32(r)
		agS[r][0] = float32(r)
		for j := range n {
			aaS[r][j] = float32(10*r + j)
			aaS8[r][j*2048/n] = float32(10*r + j) // the first element of block j
			aaS64[r][j*16384/n] = float32(10*r + j)
			aaS256[r][j*65536/n] = float32(10*r + j)
		}
	}
	const root = 1
	want := func(got []float32, w ...float32) error {
		for i := range w {
			if got[i] != w[i] {
				return fmt.Errorf("result %v, want %v", got, w)
			}
		}
		return nil
	}
	nf := float32(n)
	return []allocsCase{
		{"AllReduce", func(ctx context.Context, c *collective.Comm, r int) error {
			return collective.AllReduce(ctx, c, arS[r], arR[r], collective.Sum)
		}, func(r int) error { return want(arR[r], nf, nf*(nf-1)/2) }},
		{"AllReduce 2 KiB", func(ctx context.Context, c *collective.Comm, r int) error {
			return collective.AllReduce(ctx, c, arS2[r], arR2[r], collective.Sum)
		}, func(r int) error { return want([]float32{arR2[r][0], arR2[r][511]}, nf, nf*(nf-1)/2) }},
		{"Broadcast 8 KiB", func(ctx context.Context, c *collective.Comm, r int) error {
			if r == root {
				bc8[r][0], bc8[r][2047] = 7, 8
			}
			return collective.Broadcast(ctx, c, bc8[r], bc8[r], root)
		}, func(r int) error { return want([]float32{bc8[r][0], bc8[r][2047]}, 7, 8) }},
		{"AllToAll 8 KiB", func(ctx context.Context, c *collective.Comm, r int) error {
			return collective.AllToAll(ctx, c, aaS8[r], aaR8[r])
		}, func(r int) error {
			got, w := make([]float32, n), make([]float32, n)
			for j := range n {
				got[j], w[j] = aaR8[r][j*2048/n], float32(10*j+r)
			}
			return want(got, w...)
		}},
		{"AllReduce 64 KiB", func(ctx context.Context, c *collective.Comm, r int) error {
			return collective.AllReduce(ctx, c, arS64[r], arR64[r], collective.Sum)
		}, func(r int) error { return want([]float32{arR64[r][0], arR64[r][16383]}, nf, nf*(nf-1)/2) }},
		{"AllToAll 64 KiB", func(ctx context.Context, c *collective.Comm, r int) error {
			return collective.AllToAll(ctx, c, aaS64[r], aaR64[r])
		}, func(r int) error {
			got, w := make([]float32, n), make([]float32, n)
			for j := range n {
				got[j], w[j] = aaR64[r][j*16384/n], float32(10*j+r)
			}
			return want(got, w...)
		}},
		{"AllToAll 256 KiB", func(ctx context.Context, c *collective.Comm, r int) error {
			return collective.AllToAll(ctx, c, aaS256[r], aaR256[r])
		}, func(r int) error {
			got, w := make([]float32, n), make([]float32, n)
			for j := range n {
				got[j], w[j] = aaR256[r][j*65536/n], float32(10*j+r)
			}
			return want(got, w...)
		}},
		{"AllReduce 64 KiB tree", func(ctx context.Context, c *collective.Comm, r int) error {
			return collective.AllReduce(ctx, c, arS64[r], arR64[r], collective.Sum)
		}, func(r int) error { return want([]float32{arR64[r][0], arR64[r][16383]}, nf, nf*(nf-1)/2) }},
		{"Broadcast 64 KiB tree", func(ctx context.Context, c *collective.Comm, r int) error {
			if r == root {
				bc64[r][0], bc64[r][16383] = 7, 8
			}
			return collective.Broadcast(ctx, c, bc64[r], bc64[r], root)
		}, func(r int) error { return want([]float32{bc64[r][0], bc64[r][16383]}, 7, 8) }},
		{"Broadcast", func(ctx context.Context, c *collective.Comm, r int) error {
			if r == root {
				bc[r][0], bc[r][1] = 7, 8
			}
			return collective.Broadcast(ctx, c, bc[r], bc[r], root)
		}, func(r int) error { return want(bc[r], 7, 8) }},
		{"Reduce", func(ctx context.Context, c *collective.Comm, r int) error {
			return collective.Reduce(ctx, c, rdS[r], rdR[r], collective.Sum, root)
		}, func(r int) error {
			if r != root {
				return nil
			}
			return want(rdR[r], nf, nf*(nf-1)/2)
		}},
		{"AllGather", func(ctx context.Context, c *collective.Comm, r int) error {
			return collective.AllGather(ctx, c, agS[r], agR[r])
		}, func(r int) error {
			w := make([]float32, n)
			for j := range w {
				w[j] = float32(j)
			}
			return want(agR[r], w...)
		}},
		{"AllToAll", func(ctx context.Context, c *collective.Comm, r int) error {
			return collective.AllToAll(ctx, c, aaS[r][:n], aaR[r][:n])
		}, func(r int) error {
			w := make([]float32, n)
			for j := range w {
				w[j] = float32(10*j + r)
			}
			return want(aaR[r], w...)
		}},
		{"Barrier", func(ctx context.Context, c *collective.Comm, r int) error {
			return c.Barrier(ctx)
		}, func(int) error { return nil }},
	}
}

// measureAllocs runs tc on one communicator over eps, every rank in its
// own goroutine, and returns testing.AllocsPerRun's figure for rank 0's
// runs calls after runs/10 to warm up (the other ranks' allocations in that time count
// too); it fails t on a call's error or a wrong result.
func measureAllocs(t *testing.T, eps []transport.Endpoint, tc allocsCase, runs int) float64 {
	t.Helper()
	warm := runs / 10
	n := len(eps)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var calls atomic.Int64 // calls finished, on all ranks
	stop := make(chan struct{})
	defer close(stop)
	go WatchProgress(&calls, cancel, stop)
	comms := make([]*collective.Comm, n)
	for i, ep := range eps {
		var err error
		if comms[i], err = collective.New(ep, 1, config(tc.name)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for r := 1; r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range warm + runs + 1 { // AllocsPerRun calls once more to warm up
				if errs[r] = tc.call(ctx, comms[r], r); errs[r] != nil {
					cancel(nil)
					return
				}
				calls.Add(1)
			}
		}()
	}
	for range warm {
		if errs[0] = tc.call(ctx, comms[0], 0); errs[0] != nil {
			break
		}
		calls.Add(1)
	}
	allocs := 0.0
	if errs[0] == nil {
		allocs = testing.AllocsPerRun(runs, func() {
			if err := tc.call(ctx, comms[0], 0); err != nil && errs[0] == nil {
				errs[0] = err
				cancel(nil)
			}
			calls.Add(1)
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v (%v)", r, err, context.Cause(ctx))
		}
	}
	for r := range n {
		if err := tc.check(r); err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
	t.Logf("%.2f allocations per %s (8 bytes unless said) over %d ranks", allocs, tc.name, n)
	return allocs
}

// allocsStall bounds how long a case may go without any rank finishing a
// call: a stuck call fails the case then. The case as a whole has no
// bound, since its time is that of ~2200 calls a rank one after another,
// which a loaded machine stretches (a fixed 2 minutes failed MetaRoCE's
// 8-byte Reduce at load 25-30 with two spinning processes beside it).
const allocsStall = 30 * time.Second

// errStalled is the cause WatchProgress cancels a context with.
var errStalled = fmt.Errorf("no call finished on any rank for %v", allocsStall)

// WatchProgress cancels with an error saying so once calls (a count of
// finished calls that the caller raises) has not moved for 30 s (checked
// every second), or returns when stop is closed: a test of many calls on
// a loaded machine bounds each call's wait, not the sum of them.
func WatchProgress(calls *atomic.Int64, cancel context.CancelCauseFunc, stop <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, since := calls.Load(), time.Now()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		if c := calls.Load(); c != last {
			last, since = c, time.Now()
		} else if time.Since(since) >= allocsStall {
			cancel(errStalled)
			return
		}
	}
}
