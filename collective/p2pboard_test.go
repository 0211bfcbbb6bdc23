//go:build linux

package collective_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
)

// TestLongRecvBesideBoardCall: a Recv that waits long (its sender sleeps)
// while other ranks have begun the communicator's next AllReduce on the
// board is no mismatch. The Recv's operation number counts its pair's
// messages (here 2, its third), the AllReduce's the communicator's calls
// (also 2): a long point-to-point wait that peeked at the board's slot of
// its own number took the AllReduce there for a call of different
// arguments (the launcher's probe, TestProbeOneHost, failed so in about 1
// run in 5).
func TestLongRecvBesideBoardCall(t *testing.T) {
	const n, msgs = 4, 3
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	comms, _ := shmComms(t, n, collective.Config{})
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Go(func() {
			x := []float64{float64(r)}
			for range 2 { // the communicator's calls 0 and 1
				if err := collective.AllReduce(ctx, c, x, x, collective.Max); err != nil {
					t.Errorf("rank %d: %v", r, err)
					return
				}
			}
			msg := make([]byte, 8)
			for i := range msgs { // rank 3 to rank 2, the last after a pause
				var err error
				switch r {
				case 3:
					if i == msgs-1 {
						time.Sleep(50 * time.Millisecond)
					}
					err = collective.Send(ctx, c, msg, 2)
				case 2:
					err = collective.Recv(ctx, c, msg, 3)
				}
				if err != nil {
					t.Errorf("rank %d, message %d: %v", r, i, err)
					return
				}
			}
			// Call 2: ranks 0 and 1 begin it while rank 2 waits for its
			// third message.
			if err := collective.AllReduce(ctx, c, x, x, collective.Max); err != nil {
				t.Errorf("rank %d: %v", r, err)
				return
			}
			if x[0] != n-1 {
				t.Errorf("rank %d: max %v, want %d", r, x[0], n-1)
			}
		})
	}
	wg.Wait()
	if comms[0].BoardCalls() == 0 {
		t.Fatal("no call ran on the board: the test does not test the board's peek")
	}
}
