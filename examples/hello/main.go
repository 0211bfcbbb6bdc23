// Command hello is the smallest gocoll program: every rank joins the job
// and they sum their rank numbers. go build -o hello ./examples/hello, then
// gocoll run -np 4 ./hello (or mpirun, srun, torchrun).
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/gocoll/gocoll"
	"github.com/gocoll/gocoll/collective"
)

func main() {
	ctx := context.Background()
	world, err := gocoll.Init(ctx) // the job gocoll run, mpirun, srun or torchrun started
	if err != nil {
		log.Fatal(err) // one line: what is wrong, what to set
	}
	defer world.Close()
	x := []float32{float32(world.Rank())}
	if err := collective.AllReduce(ctx, world.Comm, x, x, collective.Sum); err != nil {
		log.Fatal(err) // names the failing rank
	}
	fmt.Printf("rank %d of %d: sum of ranks %v\n", world.Rank(), world.Size(), x[0])
}
