package gocoll_test

import (
	"context"
	"fmt"

	"github.com/gocoll/gocoll"
	"github.com/gocoll/gocoll/collective"
)

// A world of one rank, as a program started by hand with GOCOLL_RANK=0 and
// GOCOLL_WORLD_SIZE=1 gets it (GOCOLL_INSECURE=1: one host, no job key).
func ExampleInitWith() {
	ctx := context.Background()
	world, err := gocoll.InitWith(ctx, gocoll.Options{Environ: []string{
		"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_STORE=127.0.0.1:0", "GOCOLL_SITE=lab",
		"GOCOLL_INSECURE=1",
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer world.Close()
	grad := []float32{1, 2, 3}
	if err := collective.AllReduce(ctx, world.Comm, grad, grad, collective.Avg); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(world.Rank(), world.Size(), world.Site(), grad)
	// Output: 0 1 lab [1 2 3]
}
