package launcher_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/store"
)

// Three ranks, here goroutines of one process, join one job through a
// store and sum their ranks. A real program calls launcher.Init (or
// gocoll.Init) with the zero Options, and the launcher's variables say the
// same things.
func Example() {
	ctx := context.Background()
	key, err := store.GenerateJobKey() // gocoll run makes one per job
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := store.Listen(ctx, "127.0.0.1:0", store.Config{JobKey: key})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	sums := make([]int64, 3)
	var wg sync.WaitGroup
	for rank := range 3 {
		wg.Go(func() {
			world, err := launcher.Init(ctx, launcher.Options{Environ: []string{
				"GOCOLL_RANK=" + strconv.Itoa(rank), "GOCOLL_WORLD_SIZE=3",
				"GOCOLL_STORE=" + srv.Addr().String(), "GOCOLL_STORE_SERVE=0",
				"GOCOLL_JOB_KEY=" + key.Reveal(),
				"GOCOLL_HOST=node" + strconv.Itoa(rank/2), "GOCOLL_SITE=site" + strconv.Itoa(rank/2),
			}})
			if err != nil {
				fmt.Println(err)
				return
			}
			defer world.Close()
			x := []int64{int64(world.Rank())}
			if err := collective.AllReduce(ctx, world.Comm, x, x, collective.Sum); err != nil {
				fmt.Println(err)
				return
			}
			sums[rank] = x[0]
			if rank == 2 {
				fmt.Println("rank 2:", world.Site(), world.Host(), "local rank", world.LocalRank())
			}
		})
	}
	wg.Wait()
	fmt.Println("sums:", sums)

	_, err = launcher.Init(ctx, launcher.Options{Environ: []string{"HOME=/home/me"}})
	fmt.Println(err)
	// Output:
	// rank 2: site1 node1 local rank 0
	// sums: [3 3 3]
	// gocoll: no launcher environment: start the program with gocoll run, mpirun, srun or torchrun, or set GOCOLL_RANK and GOCOLL_WORLD_SIZE (and GOCOLL_STORE=host:port when ranks run on several hosts)
}
