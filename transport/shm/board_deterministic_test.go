//go:build linux

package shm_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/shm"
)

// With Config.Deterministic, an AllReduce the board takes (after the
// first call, the board's set-up) runs on the board (its fold is rank order, as the direct algorithm's) and gives the
// same bits as the direct algorithm, for floats of mixed magnitudes whose
// sum depends on the order.
func TestBoardDeterministic(t *testing.T) {
	const n, count = 4, 1001
	rng := rand.New(rand.NewPCG(3, 9))
	inputs := make([][]float32, n)
	for r := range inputs {
		inputs[r] = make([]float32, count)
		for i := range inputs[r] {
			inputs[r][i] = float32((rng.Float64() - 0.5) * math.Pow(2, float64(rng.IntN(40)-20)))
		}
	}
	run := func(cfg collective.Config) ([][]float32, []*collective.Comm) {
		comms := boardComms(t, n, shm.Config{}, cfg)
		outs, errs := make([][]float32, n), make(chan error, n)
		for r, c := range comms {
			outs[r] = make([]float32, count)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				err := collective.AllReduce(ctx, c, inputs[r], outs[r], collective.Sum) // sets the board up
				if err == nil {
					err = collective.AllReduce(ctx, c, inputs[r], outs[r], collective.Sum)
				}
				errs <- err
			}()
		}
		for range comms {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		return outs, comms
	}
	board, bc := run(collective.Config{Deterministic: true})
	direct, dc := run(collective.Config{Deterministic: true, BoardBytes: -1})
	if bc[0].BoardCalls() == 0 || dc[0].BoardCalls() != 0 {
		t.Fatalf("board calls %d with the board, %d without: want >0 and 0", bc[0].BoardCalls(), dc[0].BoardCalls())
	}
	for r := range n {
		for i := range count {
			if math.Float32bits(board[r][i]) != math.Float32bits(direct[0][i]) {
				t.Fatalf("rank %d element %d: board %v, direct %v", r, i, board[r][i], direct[0][i])
			}
		}
	}
}

// TestBoardDeterministicEveryCall: with Config.Deterministic, every
// AllReduce folds in rank order (the direct algorithm's bits), also the
// board's set-up call (a communicator's first board AllReduce) and every
// call of a communicator whose ranks could not all get a board (here
// BoardRing differs, so the set-up ends without one), which ran recursive
// doubling, ((x0+x1)+(x2+x3)) at 4 ranks, before (review A14 H2).
func TestBoardDeterministicEveryCall(t *testing.T) {
	const n, count = 4, 1001
	inputs := make([][]float32, n)
	for r := range inputs {
		inputs[r] = make([]float32, count)
		for i := range inputs[r] {
			// x0 = 1, x1 = 2^-24, x2 = 2^-24, x3 = -1 style: order-dependent
			inputs[r][i] = []float32{1, 0x1p-24, 0x1p-24, -1}[r] * float32(1+i%7)
		}
	}
	run := func(name string, cfgOf func(r int) collective.Config) [][][]float32 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		comms := boardCommsEach(t, n, shm.Config{}, cfgOf)
		outs := make([][][]float32, 2) // per call, per rank
		for call := range 2 {
			outs[call] = make([][]float32, n)
			errs := make(chan error, n)
			for r, c := range comms {
				outs[call][r] = make([]float32, count)
				go func() {
					errs <- collective.AllReduce(ctx, c, inputs[r], outs[call][r], collective.Sum)
				}()
			}
			for range n {
				if err := <-errs; err != nil {
					t.Fatalf("%s call %d: %v", name, call, err)
				}
			}
		}
		t.Logf("%s: rank 0 ran %d board calls", name, comms[0].BoardCalls())
		return outs
	}
	direct := run("direct", func(int) collective.Config { return collective.Config{Deterministic: true, BoardBytes: -1} })
	board := run("board", func(int) collective.Config { return collective.Config{Deterministic: true} })
	differs := run("rings differ", func(r int) collective.Config {
		return collective.Config{Deterministic: true, BoardRing: 8 * (1 + r/2)}
	})
	check := func(name string, got [][][]float32) {
		for call := range 2 {
			for i := range count {
				if math.Float32bits(got[call][0][i]) != math.Float32bits(direct[call][0][i]) {
					t.Errorf("%s call %d element %d: %v, direct (rank order) %v", name, call, i, got[call][0][i], direct[call][0][i])
					break
				}
			}
		}
	}
	check("board", board)
	check("rings differ", differs)
}

// Ranks whose Config.Deterministic differs run different algorithms where
// the board cannot take a call (the deterministic ones the direct one, the
// others recursive doubling): the header says which, so the call is a
// mismatch error on every rank, not a hang to the deadline.
func TestBoardDeterministicDiffers(t *testing.T) {
	const n = 4
	comms := boardCommsEach(t, n, shm.Config{}, func(r int) collective.Config {
		// Rings that differ leave the communicator without a board.
		return collective.Config{Deterministic: r%2 == 0, BoardRing: 8 * (1 + r/2)}
	})
	_, errs := allReduceAll(comms, same(n, 5), 20*time.Second)
	requireAllFail(t, errs, "deterministic (Config.Deterministic)")
}
