package transporttest

import (
	"fmt"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/gocoll/gocoll/transport"
)

// concurrentSizes are the message sizes of testConcurrent, cycled through.
var concurrentSizes = []int{0, 1, 100, 4096, 70 << 10, 300 << 10}

// testConcurrent runs a sender and a receiver goroutine for every ordered
// pair of ranks at once, each over a few tags, and checks every message.
// Run it with -race.
func testConcurrent(t *testing.T, newWorld WorldFactory) {
	const size, perPair, tags = 4, 12, 3
	eps := newWorld(t, size)
	var g errgroup.Group
	for src := range size {
		for dst := range size {
			seed := func(k int) uint64 { return uint64(src*1000 + dst*100 + k) }
			g.Go(func() error {
				reqs := make([]transport.Request, perPair)
				for k := range perPair {
					n := concurrentSizes[k%len(concurrentSizes)]
					reqs[k] = eps[src].Send(dst, tag(60, uint32(k%tags)), Pattern(n, seed(k)))
				}
				for k, r := range reqs {
					if _, err := waitErr(r); err != nil {
						return fmt.Errorf("send %d->%d #%d: %w", src, dst, k, err)
					}
				}
				return nil
			})
			g.Go(func() error {
				for k := range perPair {
					n := concurrentSizes[k%len(concurrentSizes)]
					buf := make([]byte, n)
					got, err := waitErr(eps[dst].Recv(src, tag(60, uint32(k%tags)), buf))
					if err != nil {
						return fmt.Errorf("receive %d->%d #%d: %w", src, dst, k, err)
					}
					if got != n {
						return fmt.Errorf("receive %d->%d #%d: got %d bytes, want %d", src, dst, k, got, n)
					}
					if err := Verify(buf, seed(k)); err != nil {
						return fmt.Errorf("receive %d->%d #%d: %w", src, dst, k, err)
					}
				}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}
