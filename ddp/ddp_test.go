package ddp

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
	"github.com/gocoll/gocoll/transport/shm"
	"github.com/gocoll/gocoll/transport/tcp"
	"github.com/stretchr/testify/require"
)

// onRanks runs f on n ranks, goroutines over the in-process transport, and
// returns each rank's error.
func onRanks(t *testing.T, n int, f func(ctx context.Context, comm *collective.Comm) error) []error {
	t.Helper()
	world, err := inproc.NewWorld(n)
	require.NoError(t, err)
	defer func() { _ = world.Close() }()
	return onEndpoints(world.Endpoints(), f)
}

// onEndpoints runs f on a communicator over each of eps, one goroutine
// each, and returns each rank's error.
func onEndpoints(eps []transport.Endpoint, f func(ctx context.Context, comm *collective.Comm) error) []error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs := make([]error, len(eps))
	var wg sync.WaitGroup
	for rank, ep := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			comm, err := collective.New(ep, 1, collective.Config{})
			if err != nil {
				errs[rank] = err
				return
			}
			defer func() { _ = comm.Close() }()
			errs[rank] = f(ctx, comm)
		}()
	}
	wg.Wait()
	return errs
}

// makeParams returns parameters of the given sizes, filled from seed.
func makeParams(sizes []int, seed uint64) []Param {
	rng := rand.New(rand.NewPCG(seed, 1))
	ps := make([]Param, len(sizes))
	for i, n := range sizes {
		ps[i] = Param{Name: fmt.Sprintf("p%d", i), Data: make([]float32, n)}
		for k := range ps[i].Data {
			ps[i].Data[k] = rng.Float32()
		}
	}
	return ps
}

// intGrad fills g with integers in [-lim, lim] drawn from rank, step and
// parameter, so that sums are exact in any order.
func intGrad(g []float32, rank, step, param int, lim int) {
	rng := rand.New(rand.NewPCG(uint64(rank)<<32|uint64(step), uint64(param)))
	for k := range g {
		g[k] = float32(rng.IntN(2*lim+1) - lim)
	}
}

// The bucketed, asynchronous, out-of-order reduction gives bitwise the
// result of one unbucketed AllReduce of every gradient concatenated, over
// 1 to 4 ranks, with buckets of uneven sizes (a parameter larger than the
// bucket limit among them), in float32 and bfloat16.
func TestExactAgainstUnbucketed(t *testing.T) {
	sizes := []int{3, 700, 1, 64, 2500, 17, 1025, 5, 300, 4096, 2, 99}
	for _, bf16 := range []bool{false, true} {
		for n := 1; n <= 4; n++ {
			t.Run(fmt.Sprintf("bf16=%v/ranks=%d", bf16, n), func(t *testing.T) {
				lim := 1000 // float32: partial sums stay far below 2^24
				if bf16 {
					lim = 16 // bfloat16 holds integers up to 256 exactly
				}
				cfg := Config{BucketBytes: 4 * 1500, FirstBucketBytes: 4 * 120, BF16: bf16}
				errs := onRanks(t, n, func(ctx context.Context, comm *collective.Comm) error {
					return exactSteps(ctx, comm, sizes, cfg, lim)
				})
				for r, err := range errs {
					require.NoError(t, err, "rank %d", r)
				}
			})
		}
	}
}

// exactSteps runs 3 steps on this rank, each parameter's gradient integers
// in [-lim, lim] marked ready in an order of the rank's own, and checks
// that Wait leaves bitwise the result of one unbucketed AllReduce of all
// the gradients concatenated, divided by the ranks.
func exactSteps(ctx context.Context, comm *collective.Comm, sizes []int, cfg Config, lim int) error {
	n := comm.Size()
	rank := comm.Rank()
	m, err := New(ctx, comm, makeParams(sizes, uint64(rank)), cfg)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(rank), 99))
	for step := range 3 {
		m.ZeroGrad()
		order := rng.Perm(len(sizes)) // each rank its own order
		for _, i := range order {
			intGrad(m.Grad(i), rank, step, i, lim)
			if err := m.Ready(ctx, i); err != nil {
				return err
			}
		}
		var flat []float32
		for i := range sizes {
			g := make([]float32, sizes[i])
			intGrad(g, rank, step, i, lim)
			flat = append(flat, g...)
		}
		if err := collective.AllReduce(ctx, comm, flat, flat, collective.Sum); err != nil {
			return err
		}
		if err := m.Wait(ctx); err != nil {
			return err
		}
		off := 0
		for i := range sizes {
			for k, got := range m.Grad(i) {
				want := flat[off+k] / float32(n)
				if math.Float32bits(got) != math.Float32bits(want) {
					return fmt.Errorf("step %d param %d[%d]: got %v, want %v", step, i, k, got, want)
				}
			}
			off += sizes[i]
		}
	}
	return nil
}

// Buckets fill in reverse order, each closed once it holds its limit
// (FirstBucketBytes for the first, then BucketBytes) or more.
func TestBucketLayout(t *testing.T) {
	sizes := []int{10, 10, 100, 30, 5, 5, 5}
	errs := onRanks(t, 1, func(ctx context.Context, comm *collective.Comm) error {
		m, err := New(ctx, comm, makeParams(sizes, 1), Config{BucketBytes: 4 * 40, FirstBucketBytes: 4 * 12})
		if err != nil {
			return err
		}
		want := [][]int{{6, 5, 4}, {3, 2}, {1, 0}} // 15 >= 12 elements, 130 >= 40, then the rest
		if got := m.Buckets(); !slices.EqualFunc(got, want, slices.Equal) {
			return fmt.Errorf("buckets %v, want %v", got, want)
		}
		m, err = New(ctx, comm, makeParams(sizes, 1), Config{})
		if err != nil {
			return err
		}
		if got := m.Buckets(); len(got) != 1 || len(got[0]) != len(sizes) {
			return fmt.Errorf("default buckets %v, want one of all", got)
		}
		return nil
	})
	require.NoError(t, errs[0])
}

// Every rank starts from rank 0's parameters.
func TestBroadcastFromRank0(t *testing.T) {
	sizes := []int{5, 3000, 7}
	got := make([][]Param, 3)
	errs := onRanks(t, 3, func(ctx context.Context, comm *collective.Comm) error {
		ps := makeParams(sizes, uint64(comm.Rank())+10)
		_, err := New(ctx, comm, ps, Config{BucketBytes: 4096})
		got[comm.Rank()] = ps
		return err
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	want := makeParams(sizes, 10)
	for r := range got {
		for i := range want {
			require.Equal(t, want[i].Data, got[r][i].Data, "rank %d param %d", r, i)
		}
	}
}

// A registration that differs on one rank is an error on every rank, named.
func TestMismatchedRegistration(t *testing.T) {
	sizes := []int{4, 6, 8}
	cases := map[string]struct {
		params func(rank int) []Param
		cfg    func(rank int) Config
		want   string // in every rank's error
	}{
		"fewer parameters": {
			params: func(r int) []Param {
				if r == 2 {
					return makeParams(sizes[:2], 1)
				}
				return makeParams(sizes, 1)
			},
			want: "rank 2 registered 2 parameters, rank 0 3",
		},
		"another size": {
			params: func(r int) []Param {
				if r == 1 {
					return makeParams([]int{4, 7, 8}, 1)
				}
				return makeParams(sizes, 1)
			},
			want: "parameter 1 (p1 on rank",
		},
		"another shape": {
			params: func(r int) []Param {
				ps := makeParams(sizes, 1)
				ps[2].Shape = []int{2, 4}
				if r == 3 {
					ps[2].Shape = []int{4, 2}
				}
				return ps
			},
			want: "another shape on rank 3",
		},
		"swapped order": {
			params: func(r int) []Param {
				if r == 1 {
					return makeParams([]int{6, 4, 8}, 1)
				}
				return makeParams(sizes, 1)
			},
			want: "parameter 0 ",
		},
		"another config": {
			params: func(int) []Param { return makeParams(sizes, 1) },
			cfg: func(r int) Config {
				return Config{BF16: r == 1}
			},
			want: "rank 1's Config",
		},
		"invalid on one rank": {
			params: func(r int) []Param {
				ps := makeParams(sizes, 1)
				if r == 2 {
					ps[1].Data = nil
				}
				return ps
			},
			want: "rank 2",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := onRanks(t, 4, func(ctx context.Context, comm *collective.Comm) error {
				var cfg Config
				if tc.cfg != nil {
					cfg = tc.cfg(comm.Rank())
				}
				_, err := New(ctx, comm, tc.params(comm.Rank()), cfg)
				return err
			})
			for r, err := range errs {
				require.Error(t, err, "rank %d", r)
				if name == "invalid on one rank" && r == 2 {
					require.Contains(t, err.Error(), "parameter 1 (p1) has no data")
					continue
				}
				require.Contains(t, err.Error(), tc.want, "rank %d", r)
			}
		})
	}
}

// NoSync accumulates locally; the next synchronising step reduces the sum.
func TestNoSyncAccumulates(t *testing.T) {
	sizes := []int{10, 20}
	errs := onRanks(t, 3, func(ctx context.Context, comm *collective.Comm) error {
		rank := comm.Rank()
		m, err := New(ctx, comm, makeParams(sizes, 1), Config{FirstBucketBytes: 40})
		if err != nil {
			return err
		}
		m.ZeroGrad()
		add := func() error {
			for i := range sizes {
				for k := range m.Grad(i) {
					m.Grad(i)[k] += float32(rank + k)
				}
				if err := m.Ready(ctx, i); err != nil {
					return err
				}
			}
			return m.Wait(ctx)
		}
		for range 2 {
			if err := m.NoSync(add); err != nil {
				return err
			}
		}
		if got := m.Grad(0)[1]; got != float32(2*(rank+1)) {
			return fmt.Errorf("inside NoSync the gradient was reduced: %v", got)
		}
		if err := add(); err != nil {
			return err
		}
		for i := range sizes {
			for k, got := range m.Grad(i) {
				want := float32(3*(0+1+2+3*k)) / 3 // three micro-batches on each of 3 ranks
				if got != want {
					return fmt.Errorf("param %d[%d] = %v, want %v", i, k, got, want)
				}
			}
		}
		if m.Stats().Steps != 1 {
			return fmt.Errorf("%d synchronising steps, want 1", m.Stats().Steps)
		}
		return nil
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
}

// Ranks with fewer batches Join; the others' steps average over the ranks
// still training, and every replica takes the same updates.
func TestJoinUnevenBatches(t *testing.T) {
	for _, bf16 := range []bool{false, true} {
		t.Run(fmt.Sprintf("bf16=%v", bf16), func(t *testing.T) { testJoin(t, bf16) })
	}
}

func testJoin(t *testing.T, bf16 bool) {
	const n = 4
	lim := 100
	if bf16 {
		lim = 16 // sums of 4 stay exact in bfloat16
	}
	sizes := []int{7, 300}
	finals := make([][]float32, n)
	errs := onRanks(t, n, func(ctx context.Context, comm *collective.Comm) error {
		rank := comm.Rank()
		ps := makeParams(sizes, 5)
		m, err := New(ctx, comm, ps, Config{FirstBucketBytes: 28, BF16: bf16})
		if err != nil {
			return err
		}
		sgd := func() error {
			for i, p := range ps {
				for k, g := range m.Grad(i) {
					p.Data[k] -= g
				}
			}
			return nil
		}
		for step := range rank + 1 { // rank r has r+1 batches
			m.ZeroGrad()
			for i := range sizes {
				intGrad(m.Grad(i), rank, step, i, lim)
			}
			if err := m.Wait(ctx); err != nil {
				return err
			}
			_ = sgd()
		}
		if err := m.Join(ctx, sgd); err != nil {
			return err
		}
		finals[rank] = slices.Concat(ps[0].Data, ps[1].Data)
		return nil
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	// The reference: at step s the ranks r >= s average their gradients.
	ref := makeParams(sizes, 5)
	for step := range n {
		for i := range sizes {
			sum := make([]float32, sizes[i])
			g := make([]float32, sizes[i])
			for r := step; r < n; r++ {
				intGrad(g, r, step, i, lim)
				for k := range g {
					sum[k] += g[k]
				}
			}
			for k := range sum {
				ref[i].Data[k] -= sum[k] / float32(n-step)
			}
		}
	}
	want := slices.Concat(ref[0].Data, ref[1].Data)
	for r := range n {
		require.Equal(t, want, finals[r], "rank %d", r)
	}
}

// SetWeight makes the result the weighted mean: gradients that are sums
// over each rank's samples, weighted by the sample counts, give the mean
// over all samples.
func TestWeightedMean(t *testing.T) {
	errs := onRanks(t, 3, func(ctx context.Context, comm *collective.Comm) error {
		rank := comm.Rank()
		m, err := New(ctx, comm, makeParams([]int{4}, 1), Config{})
		if err != nil {
			return err
		}
		samples := rank + 1 // 1, 2 and 3 samples, each of gradient 6
		for k := range m.Grad(0) {
			m.Grad(0)[k] = float32(6 * samples)
		}
		if err := m.SetWeight(float64(samples)); err != nil {
			return err
		}
		if err := m.Wait(ctx); err != nil {
			return err
		}
		if got := m.Grad(0)[0]; got != 6 {
			return fmt.Errorf("weighted mean %v, want 6", got)
		}
		return nil
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
}

// A bucket's AllReduce starts when its last parameter is ready, before
// Wait: with every rank past Ready but none in Wait, it completes.
func TestBucketStartsBeforeWait(t *testing.T) {
	errs := onRanks(t, 2, func(ctx context.Context, comm *collective.Comm) error {
		m, err := New(ctx, comm, makeParams([]int{100, 3}, 1), Config{FirstBucketBytes: 12})
		if err != nil {
			return err
		}
		if len(m.buckets) != 2 {
			return fmt.Errorf("%d buckets, want 2", len(m.buckets))
		}
		if err := m.Ready(ctx, 1); err != nil { // bucket 0: parameter 1 alone
			return err
		}
		if m.buckets[1].op != nil {
			return fmt.Errorf("bucket 1 started before its parameter was ready")
		}
		if err := m.buckets[0].op.wait(ctx); err != nil {
			return err
		}
		if err := m.Wait(ctx); err != nil {
			return err
		}
		if s := m.Stats(); s.Steps != 1 || s.Comm <= 0 || s.Hidden() <= 0 {
			return fmt.Errorf("stats %+v: bucket 0's communication was hidden", s)
		}
		return nil
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
}

// A bucket ready before the ones before it waits for them: buckets start in
// bucket order on every rank.
func TestBucketsStartInOrder(t *testing.T) {
	errs := onRanks(t, 1, func(ctx context.Context, comm *collective.Comm) error {
		m, err := New(ctx, comm, makeParams([]int{10, 10, 10}, 1), Config{BucketBytes: 40, FirstBucketBytes: 40})
		if err != nil {
			return err
		}
		// Buckets: {2}, {1}, {0}. Parameter 0 (the last bucket) first.
		if err := m.Ready(ctx, 0); err != nil {
			return err
		}
		if m.buckets[2].op != nil {
			return fmt.Errorf("bucket 2 started before buckets 0 and 1")
		}
		if err := m.Ready(ctx, 2); err != nil {
			return err
		}
		if m.buckets[0].op == nil || m.buckets[2].op != nil {
			return fmt.Errorf("bucket 0 should have started, bucket 2 not")
		}
		if err := m.Ready(ctx, 1); err != nil {
			return err
		}
		if m.buckets[1].op == nil || m.buckets[2].op == nil {
			return fmt.Errorf("buckets 1 and 2 should have started")
		}
		return m.Wait(ctx)
	})
	require.NoError(t, errs[0])
}

// Misuse is an error, not a panic or a wrong result.
func TestReadyErrors(t *testing.T) {
	errs := onRanks(t, 1, func(ctx context.Context, comm *collective.Comm) error {
		m, err := New(ctx, comm, makeParams([]int{2, 2}, 1), Config{})
		if err != nil {
			return err
		}
		if err := m.Ready(ctx, 5); err == nil {
			return fmt.Errorf("Ready(5) of 2 parameters: no error")
		}
		if err := m.Wait(ctx); err == nil {
			return fmt.Errorf("Wait after a bad Ready: no error")
		}
		if err := m.Ready(ctx, 0); err != nil {
			return fmt.Errorf("the step after an error: %w", err)
		}
		if err := m.Ready(ctx, 0); err == nil {
			return fmt.Errorf("Ready twice: no error")
		}
		_ = m.Wait(ctx)
		if err := m.SetWeight(math.NaN()); err == nil {
			return fmt.Errorf("NaN weight: no error")
		}
		if _, err := New(ctx, comm, makeParams([]int{2}, 1), Config{BucketBytes: 8, FirstBucketBytes: 16}); err == nil {
			return fmt.Errorf("FirstBucketBytes above BucketBytes: no error")
		}
		return nil
	})
	require.NoError(t, errs[0])
}

// The same exactness over the transports between processes (here their
// ranks are goroutines): several buckets in flight at once on each.
func TestExactOverTransports(t *testing.T) {
	sizes := []int{3, 70000, 1, 640, 25000, 17, 100000, 5}
	cfg := Config{BucketBytes: 4 * 30000, FirstBucketBytes: 4 * 1000}
	worlds := map[string]func(ctx context.Context, n int) ([]transport.Endpoint, func(), error){
		"tcp": func(ctx context.Context, n int) ([]transport.Endpoint, func(), error) {
			return endpoints(tcp.NewLocalWorld(ctx, n, tcp.Config{}))
		},
		"shm": func(ctx context.Context, n int) ([]transport.Endpoint, func(), error) {
			return endpoints(shm.NewLocalWorld(ctx, n, shm.Config{}))
		},
		"metaroce": func(ctx context.Context, n int) ([]transport.Endpoint, func(), error) {
			return endpoints(mrtransport.NewLocalWorld(ctx, n, mrtransport.Config{}))
		},
	}
	for name, open := range worlds {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			eps, closeAll, err := open(ctx, 3)
			if name == "shm" && err != nil && runtime.GOOS != "linux" {
				t.Skipf("shared memory needs Linux: %v", err)
			}
			require.NoError(t, err)
			defer closeAll()
			errs := onEndpoints(eps, func(ctx context.Context, comm *collective.Comm) error {
				return exactSteps(ctx, comm, sizes, cfg, 1000)
			})
			for r, err := range errs {
				require.NoError(t, err, "rank %d", r)
			}
		})
	}
}

// endpoints turns a local world's endpoints into transport.Endpoints and a
// function that closes them.
func endpoints[E transport.Endpoint](eps []E, err error) ([]transport.Endpoint, func(), error) {
	if err != nil {
		return nil, nil, err
	}
	out := make([]transport.Endpoint, len(eps))
	for i, ep := range eps {
		out[i] = ep
	}
	return out, func() {
		for _, ep := range eps {
			_ = ep.Close()
		}
	}, nil
}
