//go:build linux

package shm_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/transport/shm"
)

// TestBoardSplitAllReduce: AllReduces above Config.BoardSplitBytes run on
// the board folding in shards (two rounds), with every rank's result
// right, at world sizes 2 to 6 and counts that the ranks do not divide,
// up to a full slot (64 KiB).
func TestBoardSplitAllReduce(t *testing.T) {
	for _, n := range []int{2, 3, 4, 6} {
		comms := boardComms(t, n, shm.Config{}, collective.Config{BoardBytes: 64 << 10, BoardSplitBytes: 8})
		counts := []int{1, 2, 7, 1000, 8192} // 1: 8 bytes, one round; 8192: 64 KiB
		for _, count := range counts {
			for round := range 3 { // every call of the set-up's slot and the next ones
				outs, errs := allReduceAll(comms, same(n, count), 20*time.Second)
				for r := range n {
					if errs[r] != nil {
						t.Fatalf("n=%d count=%d round %d rank %d: %v", n, count, round, r, errs[r])
					}
					for i, v := range outs[r] {
						if want := int64(n*(n+1)/2 + n*i); v != want {
							t.Fatalf("n=%d count=%d round %d rank %d: [%d] = %d, want %d", n, count, round, r, i, v, want)
						}
					}
				}
			}
		}
		for r, c := range comms {
			if got, want := c.BoardCalls(), uint64(3*len(counts)-1); got != want {
				t.Fatalf("n=%d rank %d: %d calls on the board, want %d (all but the set-up call)", n, r, got, want)
			}
		}
	}
}

// TestBoardSplitDiffers: ranks whose Config.BoardSplitBytes differs
// find it at the board's set-up, every one alike, and do without the
// board, as for Config.BoardRing (review A14 L2): every call right, on
// point to point, none on the board. (Before, a board AllReduce of a size
// between the two values failed on every rank.)
func TestBoardSplitDiffers(t *testing.T) {
	const n = 4
	comms := boardCommsEach(t, n, shm.Config{}, func(r int) collective.Config {
		cfg := collective.Config{BoardBytes: 64 << 10, BoardSplitBytes: 8, Timeout: time.Minute}
		if r == 2 {
			cfg.BoardSplitBytes = -1 // never: one round
		}
		return cfg
	})
	for _, count := range []int{2, 100, 1} { // the set-up call, then sizes on both sides of the split
		outs, errs := allReduceAll(comms, same(n, count), 20*time.Second)
		for r := range comms {
			if errs[r] != nil || outs[r][0] != 10 {
				t.Fatalf("count %d, rank %d: %v %v", count, r, outs[r], errs[r])
			}
		}
	}
	for r, c := range comms {
		if c.BoardCalls() != 0 {
			t.Errorf("rank %d ran %d calls on the board, with BoardSplitBytes differing", r, c.BoardCalls())
		}
	}
}

// BenchmarkBoardAllReduce compares, from 4 to 64 KiB over shared memory
// between 4 ranks in this process, the board's AllReduce folding in shards
// (forced at every size), the board's one round where every rank folds
// every buffer, and the point-to-point algorithm that takes the size
// without the board: time and CPU per operation (all ranks together;
// bench/results/shm_large.md).
func BenchmarkBoardAllReduce(b *testing.B) {
	for _, size := range []int{4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10} {
		for _, v := range []struct {
			name string
			cfg  collective.Config
		}{
			{"shards", collective.Config{BoardSplitBytes: 1}},
			{"one-round", collective.Config{BoardSplitBytes: -1}},
			{"point-to-point", collective.Config{BoardBytes: -1}},
		} {
			b.Run(fmt.Sprintf("bytes=%d/%s", size, v.name), func(b *testing.B) {
				_, tes := benchWorld(b, 4)
				collectivetest.BenchAllReduceConfig(b, tes, size, v.cfg)
			})
		}
	}
}
