package simnet_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/simnet"
)

func grid(t testing.TB, sites, hosts, ranks int) topology.Topology {
	var rs []topology.RankInfo
	for s := range sites {
		for h := range hosts {
			for l := range ranks {
				rs = append(rs, topology.RankInfo{Rank: len(rs), Host: fmt.Sprintf("s%dh%d", s, h), Site: fmt.Sprintf("s%d", s), LocalRank: l})
			}
		}
	}
	tp, err := topology.New(rs)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// TestOneTransfer: a message between hosts takes the LAN's latency plus
// its bytes over the LAN's bandwidth, in virtual time.
func TestOneTransfer(t *testing.T) {
	links := tune.DefaultLinks()
	w, err := simnet.NewWorld(grid(t, 1, 2, 1), links)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	eps := w.Endpoints()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const n = 1 << 20
	tag := transport.Tag{Seq: 1}
	buf := make([]byte, n)
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := eps[0].Send(1, tag, make([]byte, n)).Wait(ctx); err != nil {
			t.Error(err)
		}
		_ = eps[0].Close()
	})
	if _, err := eps[1].Recv(0, tag, buf).Wait(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	want := links.Site.Latency + time.Duration(float64(n)/links.Site.Bandwidth*1e9)
	if got := w.Now(); got < want-time.Microsecond || got > want+time.Microsecond {
		t.Errorf("virtual time %v, want %v", got, want)
	}
}

// TestCollectiveTable runs part of the collectives' table over the
// simulated fabric: results must be exact whatever the timing.
func TestCollectiveTable(t *testing.T) {
	newWorld := func(t testing.TB, n int) []transport.Endpoint {
		w, err := simnet.NewWorld(grid(t, 1, n, 1), tune.DefaultLinks())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close() })
		w.AdvanceIdle(2 * time.Millisecond)
		return w.Endpoints()
	}
	collectivetest.Run(t, newWorld, collectivetest.Options{
		Sizes:  []int{1, 3, 4},
		Counts: []int{0, 7, 1023},
		DTypes: []dtype.DataType{dtype.Float32, dtype.Int8},
		Ops:    []reduce.Op{reduce.Sum, reduce.Avg},
	})
}

// runAllReduce runs one AllReduce of size bytes with algo on w's ranks and
// checks the sums where the world moves payload.
func runAllReduce(t *testing.T, w *simnet.World, topo topology.Topology, algo collective.Algorithm, size, chunk int, check bool) {
	t.Helper()
	eps := w.Endpoints()
	n := len(eps)
	var wg sync.WaitGroup
	for r, ep := range eps {
		wg.Go(func() {
			defer ep.Close()
			c, err := collective.New(ep, 1, collective.Config{AllReduce: algo, Topology: &topo, ChunkBytes: chunk})
			if err != nil {
				t.Error(err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			x := make([]float32, size/4)
			for i := range x {
				x[i] = float32(r)
			}
			if err := collective.AllReduce(ctx, c, x, x, collective.Sum); err != nil {
				t.Error(err)
				return
			}
			if want := float32(n * (n - 1) / 2); check && len(x) > 0 && (x[0] != want || x[len(x)-1] != want) {
				t.Errorf("rank %d: %v, want %v", r, x[0], want)
			}
		})
	}
	wg.Wait()
}

// TestAgainstModel runs AllReduce with each algorithm on 2 sites x 2 hosts
// x 2 ranks and on 3 x 2 x 2, and checks the virtual time (deterministic:
// it depends on the algorithm and the fabric, not on the machine) against
// the cost model's within 15 % (wider for the known gaps below).
func TestAgainstModel(t *testing.T) {
	links := tune.DefaultLinks()
	const chunk = 512 << 10
	for _, g := range [][3]int{{2, 2, 2}, {3, 2, 2}} {
		topo := grid(t, g[0], g[1], g[2])
		for _, size := range []int{8, 64 << 10, 4 << 20} {
			pred, err := tune.Predict(tune.AllReduce, tune.Input{Topology: topo, Bytes: size, ChunkBytes: chunk, Links: links, IdealTransport: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pred {
				algo, _ := collective.ParseAlgorithm(p.Algorithm)
				w, err := simnet.NewWorld(topo, links)
				if err != nil {
					t.Fatal(err)
				}
				runAllReduce(t, w, topo, algo, size, chunk, true)
				ratio := w.Now().Seconds() / p.Time.Seconds()
				t.Logf("%v %8d B %-20s simulated %-12v model %-12v %.3f", g, size, p.Algorithm, w.Now(), p.Time, ratio)
				// A known gap: the model overestimates recursive doubling on
				// a world that is not a power of two (0.80 at 3x2x2, where
				// ranks that fold early check their header partners early
				// too); it gets a wider band.
				lo, hi := 0.85, 1.15
				if p.Algorithm == "recursive-doubling" && g[0] == 3 {
					lo = 0.75
				}
				if ratio < lo || ratio > hi {
					t.Errorf("%v, %d B, %s: simulated %v, model %v: ratio %.3f outside [%.2f, %.2f]", g, size, p.Algorithm, w.Now(), p.Time, ratio, lo, hi)
				}
			}
		}
	}
}

// TestPayloadFree: a run on buffers and chunk 8 times smaller, with
// Scale 8 and no bytes copied, takes the virtual time of the full run.
func TestPayloadFree(t *testing.T) {
	topo := grid(t, 2, 2, 2)
	const chunk, scale = 512 << 10, 8
	type run struct {
		algo  collective.Algorithm
		size  int
		links tune.Links
	}
	// The hierarchical AllReduce also at 8 MiB over a 50 ms WAN: scaled,
	// 1 MiB, where a rule in bytes rather than chunks once ran the sites'
	// exchange in the payload-free run and their ring of two in the data
	// run (review B: 0.68).
	far := tune.DefaultLinks()
	far.WAN = tune.Link{Latency: 50 * time.Millisecond, Bandwidth: 1e9}
	def := tune.DefaultLinks()
	runs := []run{{collective.AlgoRing, 4 << 20, def}, {collective.AlgoTree, 4 << 20, def}, {collective.AlgoHierarchical, 4 << 20, def},
		{collective.AlgoHierarchical, 8 << 20, far}, {collective.AlgoRecursiveDoubling, 4 << 20, def}}
	for _, rn := range runs {
		algo, size := rn.algo, rn.size
		full, err := simnet.NewWorld(topo, rn.links)
		if err != nil {
			t.Fatal(err)
		}
		runAllReduce(t, full, topo, algo, size, chunk, true)
		free, err := simnet.NewWorldWith(topo, rn.links, simnet.Options{Scale: scale, NoPayload: true})
		if err != nil {
			t.Fatal(err)
		}
		runAllReduce(t, free, topo, algo, size/scale, chunk/scale, false)
		if r := free.Now().Seconds() / full.Now().Seconds(); r < 0.99 || r > 1.01 {
			t.Errorf("%v %d B: payload-free %v, data %v (ratio %.4f)", algo, size, free.Now(), full.Now(), r)
		}
		if free.Bytes()*scale > full.Bytes()*101/100 {
			t.Errorf("%v: payload-free moved %d B (x%d), data %d B", algo, free.Bytes(), scale, full.Bytes())
		}
	}
	if _, err := simnet.NewWorldWith(topo, tune.DefaultLinks(), simnet.Options{Scale: -1}); err == nil {
		t.Error("Scale -1: no error")
	}
}

// TestPairLink: a version 2 topology's link between two hosts sets the
// latency of the transfers between them.
func TestPairLink(t *testing.T) {
	topo := grid(t, 1, 2, 1)
	topo.Links = &topology.Links{Pairs: []topology.HostLink{{A: "s0h0", B: "s0h1", Link: tune.Link{Latency: 7 * time.Millisecond, Bandwidth: 1e6}}}}
	w, err := simnet.NewWorld(topo, tune.DefaultLinks())
	if err != nil {
		t.Fatal(err)
	}
	runAllReduce(t, w, topo, collective.AlgoRing, 4000, 512<<10, true)
	// Two ring steps of 2000 B each at 1 MB/s, after 7 ms each.
	if got, want := w.Now(), 2*(7*time.Millisecond+2*time.Millisecond); got < want || got > want+time.Millisecond {
		t.Errorf("ring over a 7 ms, 1 MB/s pair link: %v, want about %v", got, want)
	}
}

// TestWaitAny: a rank waiting for two receives wakes when the first
// message arrives, the one from its own host (2 us away) before the one
// from another host (25 us), at that message's virtual time; a wait whose
// context ends returns -1.
func TestWaitAny(t *testing.T) {
	links := tune.DefaultLinks()
	w, err := simnet.NewWorld(grid(t, 1, 2, 2), links) // ranks 0, 1 on host 0; 2, 3 on host 1
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	eps := w.Endpoints()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tag := transport.Tag{Seq: 1}
	var wg sync.WaitGroup
	for _, src := range []int{2, 1} {
		wg.Go(func() {
			if _, err := eps[src].Send(0, tag, []byte{byte(src)}).Wait(ctx); err != nil {
				t.Error(err)
			}
			_ = eps[src].Close()
		})
	}
	_ = eps[3].Close()
	aw := eps[0].(transport.AnyWaiter)
	far, near := eps[0].Recv(2, tag, make([]byte, 1)), eps[0].Recv(1, tag, make([]byte, 1))
	if i := aw.WaitAny(ctx, []transport.Request{far, near}, nil); i != 1 {
		t.Fatalf("WaitAny returned %d, want 1 (the receive from the same host)", i)
	}
	if got, want := w.Now(), links.Host.Latency; got < want || got > want+time.Microsecond {
		t.Errorf("woke at %v, want the same host's message at %v", got, want)
	}
	if i := aw.WaitAny(ctx, []transport.Request{far}, nil); i != 0 {
		t.Fatalf("WaitAny returned %d, want 0", i)
	}
	if got, want := w.Now(), links.Site.Latency; got < want || got > want+time.Microsecond {
		t.Errorf("woke at %v, want the other host's message at %v", got, want)
	}
	wg.Wait()
	never := eps[0].Recv(1, transport.Tag{Seq: 2}, make([]byte, 1))
	short, stop := context.WithTimeout(ctx, 10*time.Millisecond)
	defer stop()
	if i := aw.WaitAny(short, []transport.Request{never}, nil); i != -1 {
		t.Errorf("WaitAny on a message that never comes returned %d, want -1 once its context ended", i)
	}
	// A wake ends the wait with ctx still live; the rank waits again after.
	if i := aw.WaitAny(ctx, []transport.Request{never}, time.After(10*time.Millisecond)); i != -1 || ctx.Err() != nil {
		t.Errorf("WaitAny on a message that never comes returned %d (ctx %v), want -1 at its wake", i, ctx.Err())
	}
	if i := aw.WaitAny(short, []transport.Request{never}, nil); i != -1 {
		t.Errorf("WaitAny after a wake returned %d, want -1", i)
	}
}

// TestAbsentRankDeadline: with one rank absent and no deadline on the
// context, the others' tree AllReduce, which waits for the first of its
// trees' receives through the fabric (transport.AnyWaiter), fails at
// Config.Timeout instead of waiting forever: the wait wakes at the ticks
// of the operation's timer, which check the deadline. The absent rank
// either waits for a message nobody sends (the world gets stuck: a wake
// counts at once) or never calls the transport at all (the world is never
// stuck, as it is not when a rank's goroutine ended without Close: a wake
// counts once the world has stood still for a while). Before, only the
// context's own deadline could end the wait; between c862c25 and the
// stillness, a rank that never called kept it from ending.
func TestAbsentRankDeadline(t *testing.T) {
	t.Run("waits", func(t *testing.T) { absentRankDeadline(t, true) })
	t.Run("never calls", func(t *testing.T) { absentRankDeadline(t, false) })
}

func absentRankDeadline(t *testing.T, waits bool) {
	topo := grid(t, 2, 2, 2)
	w, err := simnet.NewWorld(topo, tune.DefaultLinks())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	eps := w.Endpoints()
	last := len(eps) - 1
	if waits {
		elsewhere, leave := context.WithCancel(context.Background())
		defer leave()
		go func() { _, _ = eps[last].Recv(0, transport.Tag{Seq: 9}, make([]byte, 1)).Wait(elsewhere) }()
	}
	const timeout = 300 * time.Millisecond
	errs := make([]error, last)
	var wg sync.WaitGroup
	for r, ep := range eps[:last] {
		wg.Go(func() {
			c, err := collective.New(ep, 1, collective.Config{AllReduce: collective.AlgoTree, Topology: &topo, ChunkBytes: 64 << 10, Timeout: timeout})
			if err != nil {
				errs[r] = err
				return
			}
			errs[r] = collective.AllReduce(context.Background(), c, make([]float32, 1<<18), make([]float32, 1<<18), collective.Sum)
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = w.Close() // ends the waits, so the goroutines leave
		<-done
		t.Fatalf("the ranks still waited 30 s after their %v timeout", timeout)
	}
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d: AllReduce with rank %d absent returned no error", r, last)
		}
	}
}
