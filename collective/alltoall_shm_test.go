//go:build linux

package collective_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
)

// TestAllToAllShmOneReceivePerPair: an AllToAll over shared memory whose
// blocks travel by rendezvous (64 KiB a pair) posts one receive a peer on
// each rank: the peer's header and its block come in one transfer
// (SendWithHead) and are taken by one request (RecvHead), where a header
// receive and a data receive made two. Every block arrives. The board is
// off (BoardBlockBytes -1): 64 KiB blocks would run on it.
func TestAllToAllShmOneReceivePerPair(t *testing.T) {
	const n, block, calls = 4, 64 << 10, 20
	comms, eps := shmComms(t, n, collective.Config{BoardBlockBytes: -1})
	run := func(calls int) {
		errs := onAll(t, comms, 20*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
			send, recv := make([]byte, n*block), make([]byte, n*block)
			for i := range calls {
				for p := range n {
					for j := range block {
						send[p*block+j] = byte(r*7 + p*3 + i + j)
					}
				}
				if err := collective.AllToAll(ctx, c, send, recv); err != nil {
					return err
				}
				for p := range n {
					for j := range block {
						if want := byte(p*7 + r*3 + i + j); recv[p*block+j] != want {
							return fmt.Errorf("call %d: block from rank %d byte %d is %d, want %d", i, p, j, recv[p*block+j], want)
						}
					}
				}
			}
			return nil
		})
		for r, err := range errs {
			require.NoError(t, err, "rank %d", r)
		}
	}
	run(2) // connections and pools warm
	before := make([]uint64, n)
	for r, ep := range eps {
		before[r] = ep.Stats().Receives
	}
	run(calls)
	for r, ep := range eps {
		got := ep.Stats().Receives - before[r]
		require.Equal(t, uint64(calls*(n-1)), got, "rank %d: receives in %d calls, want one a peer a call", r, calls)
	}
}

// TestAllToAllShmMismatch: over shared memory, with blocks that travel
// with the header (RecvHead), one rank calling AllToAll with larger or
// smaller blocks, or AllGather of the same bytes, is an error naming a
// mismatch on every rank, promptly, and the communicator works after:
// the header taken with a block is checked before the block counts. The
// board is off, as in TestAllToAllShmOneReceivePerPair.
func TestAllToAllShmMismatch(t *testing.T) {
	const n, block = 4, 64 << 10
	comms, _ := shmComms(t, n, collective.Config{BoardBlockBytes: -1})
	cases := map[string]func(ctx context.Context, c *collective.Comm) error{
		"larger blocks": func(ctx context.Context, c *collective.Comm) error {
			b := make([]byte, n*(block+4096))
			return collective.AllToAll(ctx, c, b, make([]byte, len(b)))
		},
		"smaller blocks": func(ctx context.Context, c *collective.Comm) error {
			b := make([]byte, n*(block-4096))
			return collective.AllToAll(ctx, c, b, make([]byte, len(b)))
		},
		"AllGather": func(ctx context.Context, c *collective.Comm) error {
			return collective.AllGather(ctx, c, make([]byte, block), make([]byte, n*block))
		},
	}
	for name, odd := range cases {
		for _, oddRank := range []int{0, 3} {
			t.Run(fmt.Sprintf("%s/rank%d", name, oddRank), func(t *testing.T) {
				errs := onAll(t, comms, 10*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
					if r == oddRank {
						return odd(ctx, c)
					}
					b := make([]byte, n*block)
					return collective.AllToAll(ctx, c, b, make([]byte, len(b)))
				})
				requireAllFail(t, errs, "mismatch")
				requireHealthy(t, comms)
			})
		}
	}
}

// TestAllToAllBoardLateMember: an AllToAll on the board (32 KiB blocks)
// where each call one rank comes late, so that the others find the slots
// of the rest there first and read those before waiting for it: every
// block arrives where it belongs, and every call ran on the board.
func TestAllToAllBoardLateMember(t *testing.T) {
	// 64 KiB blocks are written streamed or plainly by each rank's choice
	// (boardstream.go): 20 calls run both trials and then the kept way.
	for _, block := range []int{32 << 10, 64 << 10} {
		t.Run(fmt.Sprint(block), func(t *testing.T) { allToAllBoardLateMember(t, block, 20) })
	}
}

func allToAllBoardLateMember(t *testing.T, block, calls int) {
	const n = 4
	comms, _ := shmComms(t, n, collective.Config{})
	warm := onAll(t, comms, 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		return collective.AllToAll(ctx, c, make([]byte, n*block), make([]byte, n*block)) // the board comes up
	})
	for r, err := range warm {
		require.NoError(t, err, "rank %d", r)
	}
	before := make([]uint64, n)
	for r, c := range comms {
		before[r] = c.BoardCalls()
	}
	errs := onAll(t, comms, 30*time.Second, func(ctx context.Context, r int, c *collective.Comm) error {
		send, recv := make([]byte, n*block), make([]byte, n*block)
		for i := range calls {
			for p := range n {
				for j := 0; j < block; j += 512 {
					send[p*block+j] = byte(r*7 + p*3 + i + j)
				}
			}
			if i%n == r {
				time.Sleep(2 * time.Millisecond) // late: the others read the ready slots first
			}
			if err := collective.AllToAll(ctx, c, send, recv); err != nil {
				return err
			}
			for p := range n {
				for j := 0; j < block; j += 512 {
					if want := byte(p*7 + r*3 + i + j); recv[p*block+j] != want {
						return fmt.Errorf("call %d: block from rank %d byte %d is %d, want %d", i, p, j, recv[p*block+j], want)
					}
				}
			}
		}
		return nil
	})
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	for r, c := range comms {
		require.Equal(t, uint64(calls), c.BoardCalls()-before[r], "rank %d: board calls", r)
	}
}
