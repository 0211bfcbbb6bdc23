//go:build linux

package route_test

import (
	"context"
	"testing"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
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
