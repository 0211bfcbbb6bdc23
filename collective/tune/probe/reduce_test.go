package probe_test

import (
	"math"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/collective/tune/probe"
)

// Every rank times the reduction kernel, and every rank gets the lower
// median of the ranks' CPU a byte reduced: here rank r's CPU clock moves
// by (r+1) × 16 MiB × 1 ns between two of its reads, so the kernel's 16
// MiB cost it (r+1) ns a byte, and of 1, 2, 3 and 4 ns the job's figure is
// 2 ns. A probe in virtual time without a CPU clock measures none.
func TestMeasureReduction(t *testing.T) {
	links := tune.DefaultLinks()
	links.WAN = tune.Link{Latency: 3 * time.Millisecond, Bandwidth: 50e6}
	topo := grid(t, 2, 2, 1)
	got := measureWith(t, topo, links, func(r int, now func() time.Duration) probe.Options {
		var calls atomic.Int64
		step := time.Duration(r+1) * (16 << 20) // ns: (r+1) ns a byte of 16 MiB
		return probe.Options{Now: now, CPUTime: func() time.Duration { return now()/2 + time.Duration(calls.Add(1))*step }}
	})
	for r := range got {
		if !reflect.DeepEqual(got[r], got[0]) {
			t.Fatalf("rank %d measured %+v, rank 0 %+v", r, got[r], got[0])
		}
	}
	if v := got[0].ReducePerByte; math.Abs(v-2e-9) > 1e-15 {
		t.Errorf("ReducePerByte %g, want 2e-09 (the lower median of 1-4 ns)", v)
	}
	if plain := measure(t, topo, links); plain[0].ReducePerByte != 0 {
		t.Errorf("virtual time without a CPU clock: ReducePerByte %g, want 0", plain[0].ReducePerByte)
	}
}
