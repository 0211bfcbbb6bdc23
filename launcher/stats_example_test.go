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

// A world's statistics: after an AllReduce, rank 0 lists each peer and
// the transport that reaches it, and adds up the bytes it moved. On MetaRoCE
// each peer also has its paths (bytes, share, resends, RTT, window,
// state). The snapshot is a copy: keep two and subtract them to see one
// stretch of work.
func ExampleWorld_Stats() {
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
	var wg sync.WaitGroup
	for rank := range 3 {
		wg.Go(func() {
			world, err := launcher.Init(ctx, launcher.Options{Environ: []string{
				"GOCOLL_RANK=" + strconv.Itoa(rank), "GOCOLL_WORLD_SIZE=3",
				"GOCOLL_STORE=" + srv.Addr().String(), "GOCOLL_STORE_SERVE=0",
				"GOCOLL_JOB_KEY=" + key.Reveal(), "GOCOLL_TRANSPORT=tcp",
			}})
			if err != nil {
				fmt.Println(err)
				return
			}
			defer world.Close()
			x := make([]float32, 1<<16)
			if err := collective.AllReduce(ctx, world.Comm, x, x, collective.Sum); err != nil {
				fmt.Println(err)
				return
			}
			if rank != 0 {
				return
			}
			var moved int64
			for _, p := range world.Stats().Peers {
				fmt.Printf("rank %d over %s, up %v\n", p.Rank, p.Transport, p.Up)
				moved += p.BytesSent + p.BytesRecv
			}
			fmt.Println("at least the vector moved:", moved >= 4<<16)
		})
	}
	wg.Wait()
	// Output:
	// rank 1 over tcp, up true
	// rank 2 over tcp, up true
	// at least the vector moved: true
}
