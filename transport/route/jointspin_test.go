//go:build linux

package route_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
	"github.com/gocoll/gocoll/transport/route"
)

// stepper is an in-process endpoint that takes part in joint spins
// (transport.JointSpinner): it keeps the function SetSpinAlso gives it and
// counts its SpinSteps.
type stepper struct {
	*inproc.Endpoint
	also  func()
	steps int
}

func (s *stepper) SpinAny(_ context.Context, reqs []transport.Request) int {
	return transport.CompletedAny(reqs)
}
func (s *stepper) SpinStep()            { s.steps++ }
func (s *stepper) SetSpinAlso(f func()) { s.also = f }

// New makes the spin of each joined transport that can poll others poll
// every other such one once a round (not itself), and Close undoes it; a
// transport joined with none of its kind is given nothing.
func TestJoinedSpinsPollEachOther(t *testing.T) {
	worlds := make([]*inproc.World, 3)
	for i := range worlds {
		w, err := inproc.NewWorld(2)
		if err != nil {
			t.Fatal(err)
		}
		worlds[i] = w
		t.Cleanup(func() { _ = w.Close() })
	}
	a := &stepper{Endpoint: worlds[0].Endpoints()[0].(*inproc.Endpoint)}
	b := &stepper{Endpoint: worlds[1].Endpoints()[0].(*inproc.Endpoint)}
	ep, err := route.New([]transport.Endpoint{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if a.also == nil || b.also == nil {
		t.Fatalf("joined spinners given no SpinAlso: a %v, b %v", a.also != nil, b.also != nil)
	}
	a.also()
	if a.steps != 0 || b.steps != 1 {
		t.Fatalf("a's round stepped a %d and b %d times, want 0 and 1", a.steps, b.steps)
	}
	b.also()
	if a.steps != 1 || b.steps != 1 {
		t.Fatalf("b's round stepped a %d and b %d times, want 1 and 1", a.steps, b.steps)
	}
	if err := ep.Close(); err != nil {
		t.Fatal(err)
	}
	if a.also != nil || b.also != nil {
		t.Fatal("Close left a SpinAlso function in place")
	}
	alone := &stepper{Endpoint: worlds[2].Endpoints()[0].(*inproc.Endpoint)}
	other, err := inproc.NewWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	if _, err := route.New([]transport.Endpoint{alone, other.Endpoints()[0]}); err != nil {
		t.Fatal(err)
	}
	if alone.also != nil {
		t.Fatal("a spinner joined with no other was given a SpinAlso function")
	}
}

// TestCollectiveTableJointSpin runs the collectives over hosts of two
// ranks joined by MetaRoCE (on loopback), whose spins and shared memory's
// poll each other (transport.JointSpinner).
func TestCollectiveTableJointSpin(t *testing.T) {
	world := func(t testing.TB, size int) []transport.Endpoint {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		far, err := mrtransport.NewLocalWorld(ctx, size, mrtransport.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			for _, e := range far {
				_ = e.Close()
			}
		})
		return newSplitWorldOver(t, size, func(r int) transport.Endpoint { return far[r] })
	}
	opts := collectivetest.Options{
		Sizes:  []int{3, 4},
		Counts: []int{7, 1023, 65539},
		DTypes: []dtype.DataType{dtype.Float32},
	}
	if testing.Short() {
		opts.Sizes, opts.Counts = []int{4}, []int{1023, 65539}
	}
	collectivetest.Run(t, world, opts)
}
