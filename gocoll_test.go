package gocoll_test

import (
	"context"
	"fmt"
	"testing"

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

// Launched tells a process a launcher started (any of the launchers'
// rank variables set, whatever its value) from one started by hand.
func TestLaunched(t *testing.T) {
	for _, name := range []string{"GOCOLL_RANK", "OMPI_COMM_WORLD_RANK", "RANK", "WORLD_SIZE", "SLURM_PROCID"} {
		t.Setenv(name, "")
	}
	if gocoll.Launched() {
		t.Fatal("Launched with no launcher variable set")
	}
	t.Setenv("SLURM_PROCID", "1")
	if !gocoll.Launched() {
		t.Fatal("not Launched with SLURM_PROCID set")
	}
	t.Setenv("SLURM_PROCID", "")
	t.Setenv("GOCOLL_RANK", "not a number")
	if !gocoll.Launched() {
		t.Fatal("not Launched with GOCOLL_RANK set (to a bad value, which Init reports)")
	}
}
