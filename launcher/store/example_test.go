package store_test

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/gocoll/gocoll/launcher/store"
)

// Four ranks find each other's endpoint addresses through a store served by
// the launcher, then agree on a communicator id broadcast by rank 0.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	jobKey, err := store.GenerateJobKey() // gocoll run makes one per job
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := store.Listen(ctx, "127.0.0.1:0", store.Config{JobKey: jobKey})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	const size = 4
	endpoints := make([][][]byte, size)
	commIDs := make([][]byte, size)
	var wg sync.WaitGroup
	for rank := range size {
		wg.Go(func() {
			c, err := store.Dial(ctx, srv.Addr().String(), store.ClientConfig{JobKey: jobKey})
			if err != nil {
				log.Fatal(err)
			}
			defer c.Close()
			job := store.Prefixed(c, "job42/")
			addr := fmt.Appendf(nil, "10.0.0.%d:7000", rank+1)
			if endpoints[rank], err = store.AllGather(ctx, job, rank, size, "endpoints", addr); err != nil {
				log.Fatal(err)
			}
			if commIDs[rank], err = store.Broadcast(ctx, job, rank, size, 0, "comm", []byte("comm-7f3a")); err != nil {
				log.Fatal(err)
			}
		})
	}
	wg.Wait()
	for r, addr := range endpoints[size-1] {
		fmt.Printf("rank %d at %s\n", r, addr)
	}
	fmt.Printf("rank 3 joins %s\n", commIDs[3])
	// Output:
	// rank 0 at 10.0.0.1:7000
	// rank 1 at 10.0.0.2:7000
	// rank 2 at 10.0.0.3:7000
	// rank 3 at 10.0.0.4:7000
	// rank 3 joins comm-7f3a
}

// A Get that waits for a key nobody sets ends at the context's deadline,
// naming the key.
func ExampleMemStore_Get() {
	s := store.NewMemStore(store.Limits{})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := s.Get(ctx, "rank3/addr")
	fmt.Println(err)
	// Output: store: keys still missing ["rank3/addr"]: context deadline exceeded
}
