//go:build linux

package shm

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
)

// A spinning wait calls the function SetSpinAlso gave (a route's other
// transports, transport.JointSpinner) once in every round, Spin and
// SpinAny alike, and none once it is removed; SpinStep takes what has
// arrived in the rings as a round does, and does nothing once the endpoint
// is closed.
func TestSpinCallsSpinAlso(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eps, err := NewLocalWorld(ctx, 2, Config{SpinWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, e := range eps {
			_ = e.Close()
		}
	}()
	rounds := 0
	eps[0].SetSpinAlso(func() { rounds++ })
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 9, Op: 1}}
	r := eps[0].Recv(1, tag, make([]byte, 64)) // nothing is sent: every spin runs out
	if r.(*request).Spin(ctx) {
		t.Fatal("a receive nobody sent to completed")
	}
	if rounds == 0 {
		t.Fatal("Spin made no call of the SpinAlso function")
	}
	before := rounds
	if i := eps[0].SpinAny(ctx, []transport.Request{r}); i >= 0 {
		t.Fatalf("SpinAny returned %d for a receive nobody sent to", i)
	}
	if rounds == before {
		t.Fatal("SpinAny made no call of the SpinAlso function")
	}
	eps[0].SetSpinAlso(nil)
	before = rounds
	r.(*request).Spin(ctx)
	if rounds != before {
		t.Fatalf("%d calls of a removed SpinAlso function", rounds-before)
	}
	r.Cancel()
	_ = eps[0].Close()
	eps[0].SpinStep() // closed: returns without touching the rings
}
