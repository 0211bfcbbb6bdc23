package ddp_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/ddp"
	"github.com/gocoll/gocoll/transport/inproc"
)

// Two ranks (goroutines here; processes under gocoll run) train a linear
// model y = w·x + b data-parallel: each computes the gradient of its own
// sample, marks each parameter ready as backward produces it, waits for the
// averages and takes the same SGD step.
func Example() {
	world, _ := inproc.NewWorld(2)
	defer world.Close()
	xs := [][]float32{{1, 2}, {3, -1}} // rank r's sample, with target 1
	var wg sync.WaitGroup
	for rank, ep := range world.Endpoints() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			comm, _ := collective.New(ep, 0, collective.Config{})
			defer comm.Close()
			w := []float32{float32(rank), 0} // rank 1's values are replaced by rank 0's
			b := []float32{0}
			m, err := ddp.New(ctx, comm, []ddp.Param{{Name: "w", Data: w}, {Name: "b", Data: b}}, ddp.Config{})
			if err != nil {
				fmt.Println(err)
				return
			}
			x := xs[rank]
			for range 50 {
				m.ZeroGrad()
				diff := w[0]*x[0] + w[1]*x[1] + b[0] - 1 // d(loss)/d(y) for loss (y-1)²/2
				m.Grad(1)[0] = diff                      // backward: the last parameter first
				_ = m.Ready(ctx, 1)
				m.Grad(0)[0], m.Grad(0)[1] = diff*x[0], diff*x[1]
				_ = m.Ready(ctx, 0)
				if err := m.Wait(ctx); err != nil {
					fmt.Println(err)
					return
				}
				for i, p := range m.Params() {
					for k, g := range m.Grad(i) {
						p.Data[k] -= 0.1 * g
					}
				}
			}
			if rank == 1 {
				fmt.Printf("rank 1: w·x+b = %.3f on its sample, %.3f on rank 0's\n",
					w[0]*x[0]+w[1]*x[1]+b[0], w[0]*xs[0][0]+w[1]*xs[0][1]+b[0])
			}
		}()
	}
	wg.Wait()
	// Output: rank 1: w·x+b = 1.000 on its sample, 1.000 on rank 0's
}
