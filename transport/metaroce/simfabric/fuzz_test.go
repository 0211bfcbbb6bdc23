package simfabric

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// byteReader hands out fuzz input a byte at a time, then zeros.
type byteReader struct{ b []byte }

func (r *byteReader) next() int {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return int(v)
}

func (r *byteReader) linkConfig() LinkConfig {
	rates := []int64{0, 1e6, 1e8, 1e9, -1}
	return LinkConfig{
		Rate:              rates[r.next()%len(rates)],
		Delay:             time.Duration(r.next()) * time.Microsecond,
		Jitter:            time.Duration(r.next()) * 100 * time.Nanosecond,
		QueueBytes:        r.next() * 256,
		ECNThresholdBytes: r.next() * 128,
		Loss:              float64(r.next()) / 200,
		Dup:               float64(r.next()) / 250,
		Corrupt:           float64(r.next()) / 250,
		Reorder:           float64(r.next()) / 250,
		ReorderDelay:      time.Duration(r.next()) * time.Microsecond,
	}
}

// fuzzRun interprets data as a sequence of fabric operations, checking the
// fabric's invariants as it goes. Errors are expected for bad operations;
// panics, lost packets and time going backwards are not.
func fuzzRun(t *testing.T, data []byte) {
	n := newTestNet(t, Config{Seed: int64(len(data)), MaxNodes: 6, MaxLinks: 8, MaxPaths: 12,
		MaxHops: 3, MaxPacketBytes: 2000, MaxPacketsInFlight: 3000, MaxFaults: 16, MaxEventsPerInstant: 5000})
	last := time.Duration(0)
	check := func(d Delivery) {
		require.GreaterOrEqual(t, d.At, last)
		require.Equal(t, n.Now(), d.At)
		last = d.At
	}
	r := &byteReader{b: data}
	for ops := 0; len(r.b) > 0 && ops < 500; ops++ {
		switch r.next() % 7 {
		case 0:
			_, _ = n.AddNode()
		case 1:
			_, _ = n.AddLink(r.linkConfig())
		case 2:
			links := make([]LinkID, r.next()%5)
			for i := range links {
				links[i] = LinkID(r.next()%10 - 1)
			}
			_, _ = n.AddPath(NodeID(r.next()%7), NodeID(r.next()%7), links...)
		case 3:
			for range r.next() % 40 {
				_ = n.Send(PathID(r.next()%13), make([]byte, r.next()*9))
			}
		case 4:
			_ = n.AdvanceTo(n.Now()+time.Duration(r.next()*r.next())*time.Microsecond, check)
		case 5:
			kind := FaultKind(r.next() % 4)
			at := n.Now() + time.Duration(r.next())*10*time.Microsecond
			_ = n.Schedule(Fault{At: at, Link: LinkID(r.next()%9 - 1), Kind: kind, Config: r.linkConfig()})
		case 6:
			_ = n.Send(PathID(r.next()%13), nil)
		}
		requireConserved(t, n.Fabric)
	}
	for range 10_000 {
		next, ok := n.NextEventTime()
		if !ok {
			break
		}
		require.NoError(t, n.AdvanceTo(next, check))
	}
	require.Zero(t, n.InFlight())
	for i, s := range n.Stats().Paths {
		require.Equal(t, Count{}, s.InFlight(), "path %d", i)
	}
}

func FuzzFabric(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 1, 3, 10, 5, 0, 50, 10, 10, 10, 10, 20, 2, 1, 1, 0, 1, 3, 30, 0, 100, 4, 200, 200})
	f.Add([]byte{0, 0, 0, 1, 1, 0, 0, 4, 8, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		2, 2, 1, 2, 0, 2, 3, 39, 0, 200, 0, 200, 0, 200, 5, 1, 3, 1, 5, 2, 9, 1, 4, 255, 255})
	f.Add([]byte{0, 0, 1, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1, 0, 1, 3, 20, 0, 5, 5, 1, 0, 1,
		5, 2, 50, 1, 3, 20, 0, 5, 4, 100, 100, 6, 0})
	f.Fuzz(fuzzRun)
}

// TestFuzzSeedsRandomised runs the fuzz body over a few fixed pseudo-random
// inputs, so plain `go test` covers more than the hand-written seeds.
func TestFuzzSeedsRandomised(t *testing.T) {
	x := uint32(12345)
	for range 30 {
		data := make([]byte, 400)
		for i := range data {
			x = x*1664525 + 1013904223
			data[i] = byte(x >> 24)
		}
		fuzzRun(t, data)
	}
}
