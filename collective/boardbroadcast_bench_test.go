//go:build linux

package collective_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
)

// BenchmarkBoardBroadcast measures a Broadcast on the board (root 0, in
// place) over 4 in-process shared-memory ranks, each calling in a loop,
// with the root's data the same every call (as the peers' benchmarks
// send) or new every call (the root writes its whole buffer first, from
// one of two patterns, in both variants alike): the root writes only the
// blocks of its slot that changed (copyChanged), so the first shows what
// that saves and the second what its comparisons cost.
func BenchmarkBoardBroadcast(b *testing.B) {
	for _, bytes := range []int{8 << 10, 64 << 10} {
		for _, data := range []string{"same", "new"} {
			b.Run(fmt.Sprintf("bytes=%d/data=%s", bytes, data), func(b *testing.B) {
				const n = 4
				comms, _ := shmComms(b, n, collective.Config{})
				var pats [2][]byte
				for i := range pats {
					pats[i] = make([]byte, bytes)
					for j := range pats[i] {
						pats[i][j] = byte(j*7 + i*13 + 1)
					}
				}
				bufs := make([][]byte, n)
				for r := range bufs {
					bufs[r] = make([]byte, bytes)
				}
				copy(bufs[0], pats[0])
				run := func(iters int) {
					var wg sync.WaitGroup
					for r, c := range comms {
						wg.Go(func() {
							buf := bufs[r]
							for i := range iters {
								if r == 0 && data == "new" {
									copy(buf, pats[i%2])
								}
								if err := collective.Broadcast(context.Background(), c, buf, buf, 0); err != nil {
									b.Error(err)
									return
								}
							}
						})
					}
					wg.Wait()
				}
				run(30)
				b.ResetTimer()
				run(b.N)
				b.StopTimer()
				b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e6, "us/op")
				if comms[0].BoardCalls() == 0 {
					b.Fatal("no call ran on the board")
				}
			})
		}
	}
}

// TestBoardBroadcastChangedBlocks: a board Broadcast loop whose root
// changes one block of its data between calls (or none, or its last
// bytes) delivers the root's data of each call to every rank: the root
// writes only the changed blocks of its slot (copyChanged), the
// receivers still read the whole slot.
func TestBoardBroadcastChangedBlocks(t *testing.T) {
	const n, bytes, calls = 4, 64<<10 - 8, 40
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	comms, _ := shmComms(t, n, collective.Config{})
	// change is call i's change of the data: none every third call, else
	// one byte, in block i mod 17 (its start), or the last byte.
	change := func(b []byte, i int) {
		switch {
		case i%3 == 2:
		case i%5 == 4:
			b[len(b)-1]++
		default:
			b[min((i%17)*4096, len(b)-1)] += byte(i)
		}
	}
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Go(func() {
			buf, want := make([]byte, bytes), make([]byte, bytes)
			for j := range want {
				want[j] = byte(j * 3)
			}
			for i := range calls {
				change(want, i)
				if r == 1 {
					copy(buf, want)
				}
				if err := collective.Broadcast(ctx, c, buf, buf, 1); err != nil {
					t.Errorf("rank %d call %d: %v", r, i, err)
					return
				}
				if string(buf) != string(want) {
					t.Errorf("rank %d call %d: wrong data", r, i)
					return
				}
			}
		})
	}
	wg.Wait()
	if comms[0].BoardCalls() == 0 {
		t.Fatal("no call ran on the board")
	}
}
