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
