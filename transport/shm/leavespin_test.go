//go:build linux

package shm

import (
	"bytes"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// TestSpinEndTakesCopied: a rendezvous send copied while its rank spun (so
// its receiver rang nobody) is taken by the spin's last poll as it ends
// (leaveSpin), not left to the progress goroutine, which a ring would wake:
// the send has completed when the spin returns, and the progress goroutine
// was not woken for it.
func TestSpinEndTakesCopied(t *testing.T) {
	eps, ctx := copiedWorld(t)
	msg := bytes.Repeat([]byte{0x5a}, 64<<10)
	for op := uint64(1); op <= 20; op++ {
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 9, Op: op}}
		sp := eps[0].seg.spinners()
		sp.Add(1) // as while rank 0 spins: its receiver rings nobody
		s := eps[0].Send(1, tag, msg)
		buf := make([]byte, len(msg))
		if n, err := eps[1].Recv(0, tag, buf).Wait(ctx); err != nil || n != len(msg) || !bytes.Equal(buf, msg) {
			sp.Add(-1)
			t.Fatalf("receive %d: %d bytes, %v", op, n, err)
		}
		eps[0].spin(ctx, func() bool { return true }, time.Millisecond)
		sp.Add(-1)
		if !s.(*request).Completed() {
			t.Fatalf("send %d: not completed when the spin that followed its copy returned", op)
		}
		if n, err := s.Wait(ctx); err != nil || n != len(msg) {
			t.Fatalf("send %d: %d bytes, %v", op, n, err)
		}
	}
}
