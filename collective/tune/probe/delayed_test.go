package probe_test

import (
	"context"
	"math"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/collective/tune/probe"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
)

// counting is an endpoint that counts its Send calls.
type counting struct {
	transport.Endpoint
	calls atomic.Int64
}

func (c *counting) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	c.calls.Add(1)
	return c.Endpoint.Send(peer, tag, buf)
}

// TestMeasureDelayedPings: over simnet, whose bursts are as slow a message
// as the ping-pongs (TestMeasureCPU), a message's CPU comes from the
// delayed ping-pongs. Each end's CPU is 30 µs a message it sends (a
// transport Send) plus a quarter of a core all the time; the
// answering rank's Sleep moves every rank's clock on by its d (so the
// asking rank, waiting, sees a longer trip). The probe gives back 30 µs
// a transport Send that one message makes (both ends), the same on both
// ranks.
func TestMeasureDelayedPings(t *testing.T) {
	links := tune.DefaultLinks()
	links.WAN = tune.Link{Latency: 3 * time.Millisecond, Bandwidth: 50e6}
	topo := grid(t, 2, 1, 1)
	var slept atomic.Int64
	eps := make([]*counting, topo.Size())
	wrap := func(r int, ep transport.Endpoint) transport.Endpoint {
		eps[r] = &counting{Endpoint: ep}
		return eps[r]
	}
	got := measureOn(t, topo, links, wrap, func(r int, worldNow func() time.Duration) probe.Options {
		now := func() time.Duration { return worldNow() + time.Duration(slept.Load()) }
		return probe.Options{
			Now:     now,
			CPUTime: func() time.Duration { return time.Duration(eps[r].calls.Load())*30*time.Microsecond + now()/4 },
			Sleep: func(_ context.Context, d time.Duration) error {
				slept.Add(int64(d))
				return nil
			},
		}
	})
	if got[0].WAN == nil || got[1].WAN == nil || *got[0].WAN != *got[1].WAN {
		t.Fatalf("WAN figures %+v and %+v, want the same on both ranks", got[0].WAN, got[1].WAN)
	}
	want := time.Duration(sendsPerMessage(t, topo, links)) * 30 * time.Microsecond
	if m := got[0].WAN.CPUPerMessage; math.Abs(m.Seconds()/want.Seconds()-1) > 0.05 {
		t.Errorf("CPU a message %v, want %v ± 5 %%", m, want)
	}
}

// sendsPerMessage returns how many transport Sends one collective.Send of
// 8 bytes and its Recv make on simnet, both ends together.
func sendsPerMessage(t *testing.T, topo topology.Topology, links tune.Links) int64 {
	ends := make([]*counting, topo.Size())
	wrap := func(r int, ep transport.Endpoint) transport.Endpoint {
		ends[r] = &counting{Endpoint: ep}
		return ends[r]
	}
	onWorld(t, topo, links, wrap, func(ctx context.Context, c *collective.Comm, _ func() time.Duration) error {
		buf := make([]byte, 8)
		if c.Rank() == 0 {
			return collective.Send(ctx, c, buf, 1)
		}
		return collective.Recv(ctx, c, buf, 0)
	})
	n := ends[0].calls.Load() + ends[1].calls.Load()
	if n < 1 {
		t.Fatal("a collective.Send made no transport Send")
	}
	return n
}

// TestMeasureColdLatency: the delayed ping-pongs give each level a cold
// latency, the answer's trip less the answering rank's hold (its sleep,
// late by a rank's oversleep, included): over simnet, where a sleeping
// receiver costs nothing more, the level's latency, however late the
// answer. Where the ranks' clocks disagree (rank r's runs 1 + r/4 times
// as fast, so each answering rank times its hold differently), every rank
// still gets the same figures, the pairs' first ranks', and makes the
// same choice from them.
func TestMeasureColdLatency(t *testing.T) {
	links := tune.Links{
		Host: tune.Link{Latency: 3 * time.Microsecond, Bandwidth: 5e9},
		Site: tune.Link{Latency: 40 * time.Microsecond, Bandwidth: 1.25e9},
		WAN:  tune.Link{Latency: 2 * time.Millisecond, Bandwidth: 50e6},
	}
	topo := grid(t, 2, 2, 2)
	run := func(rate func(r int) float64) []topology.Links {
		var slept atomic.Int64
		return measureWith(t, topo, links, func(r int, worldNow func() time.Duration) probe.Options {
			now := func() time.Duration { return time.Duration(float64(worldNow()+time.Duration(slept.Load())) * rate(r)) }
			return probe.Options{
				Now:     now,
				CPUTime: func() time.Duration { return now() / 4 },
				Sleep: func(_ context.Context, d time.Duration) error {
					slept.Add(int64(d) + int64(r)*100_000) // rank r oversleeps r × 100 µs
					return nil
				},
			}
		})
	}
	got := run(func(int) float64 { return 1 })
	for i, l := range []*topology.Link{got[0].Host, got[0].Site, got[0].WAN} {
		want := []tune.Link{links.Host, links.Site, links.WAN}[i].Latency
		if l == nil {
			t.Fatalf("level %d not measured", i)
		}
		if l.LatencyCold < l.Latency || l.LatencyCold-want > 5*time.Microsecond || want-l.LatencyCold > 5*time.Microsecond {
			t.Errorf("level %d: cold latency %v (latency %v), want the link's %v", i, l.LatencyCold, l.Latency, want)
		}
	}
	skewed := run(func(r int) float64 { return 1 + float64(r)/4 })
	for r := range skewed {
		if !reflect.DeepEqual(skewed[r], skewed[0]) {
			t.Errorf("rank %d measured %+v, rank 0 %+v", r, skewed[r], skewed[0])
		}
	}
	requireSameChoice(t, topo, skewed, 8, 64<<10)
}
