package collective_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/inproc"
)

// Four ranks, as goroutines over the in-process transport, sum a vector.
func Example() {
	world, _ := inproc.NewWorld(4)
	defer world.Close()
	results := make([][]float32, 4)
	var wg sync.WaitGroup
	for rank, ep := range world.Endpoints() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			comm, err := collective.New(ep, 0, collective.Config{})
			if err != nil {
				panic(err)
			}
			grad := []float32{float32(rank), 1, 2}
			if err := collective.AllReduce(context.Background(), comm, grad, grad, collective.Sum); err != nil {
				panic(err)
			}
			results[rank] = grad
		}()
	}
	wg.Wait()
	fmt.Println(results[0], results[3])
	// Output: [6 4 8] [6 4 8]
}
