//go:build linux

package shm

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/transporttest"
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
	transporttest.SpinAlso(t, eps[0])
	_ = eps[0].Close()
	eps[0].SpinStep() // closed: returns without touching the rings
}
