package probe_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/collective/tune/probe"
)

// Both ends of a pair run the same messages whatever their own settings
// (review B14 N1): where only one end reads its CPU time, neither runs the
// bursts and the level has no CPU figures; where only one can sleep,
// neither runs the delayed ping-pongs; both ranks get the same figures,
// without error. Different BulkBytes are an error naming both, on both
// ranks, not a wait to the deadline.
func TestMeasureEndsAgree(t *testing.T) {
	links := tune.DefaultLinks()
	links.WAN = tune.Link{Latency: 3 * time.Millisecond, Bandwidth: 50e6}
	topo := grid(t, 2, 1, 1)
	nap := func(context.Context, time.Duration) error { return nil }
	// Options where rank cpu (-1: every rank) reads a CPU clock and rank
	// sleep (-1: every rank) can sleep.
	opts := func(cpu, sleep int) func(r int, now func() time.Duration) probe.Options {
		return func(r int, now func() time.Duration) probe.Options {
			o := probe.Options{Now: now}
			if cpu < 0 || r == cpu {
				o.CPUTime = func() time.Duration { return now() / 2 }
			}
			if sleep < 0 || r == sleep {
				o.Sleep = nap
			}
			return o
		}
	}
	for _, c := range []struct {
		name   string
		opts   func(r int, now func() time.Duration) probe.Options
		hasCPU bool
	}{
		{"CPU time on rank 0 only", opts(0, -1), false},
		{"CPU time on rank 1 only", opts(1, -1), false},
		{"sleep on rank 0 only", opts(-1, 0), true},
		{"sleep on rank 1 only", opts(-1, 1), true},
	} {
		got := measureOn(t, topo, links, nil, c.opts)
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("%s: rank 1 measured %+v, rank 0 %+v", c.name, got[1].WAN, got[0].WAN)
		}
		if wan := got[0].WAN; wan == nil || wan.Bandwidth == 0 || (wan.CPUPerByte > 0) != c.hasCPU {
			t.Errorf("%s: WAN %+v, want CPU figures %v", c.name, wan, c.hasCPU)
		}
	}
	errs := make([]error, topo.Size())
	onWorld(t, topo, links, nil, func(ctx context.Context, c *collective.Comm, now func() time.Duration) error {
		_, errs[c.Rank()] = probe.Measure(ctx, c, topo, probe.Options{Now: now, BulkBytes: 4<<20 + c.Rank()<<12})
		return nil
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "BulkBytes") {
			t.Errorf("rank %d with BulkBytes differing: %v, want an error naming BulkBytes", r, err)
		}
	}
}
