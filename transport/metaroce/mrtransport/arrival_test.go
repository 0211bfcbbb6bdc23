package mrtransport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestArrival converts kernel stamps into the engine's time base and
// clamps them to [the path's previous arrival, now].
func TestArrival(t *testing.T) {
	e := &engine{arrived: make([]time.Duration, 2), arrivalTimes: true}
	read := time.Unix(1_764_921_600, 0)
	wall := read.UnixNano()
	ms := time.Millisecond
	for _, tt := range []struct {
		name  string
		path  int
		now   time.Duration
		stamp int64
		want  time.Duration
	}{
		{"no stamp: now", 0, 10 * ms, 0, 10 * ms},
		{"waited 3 ms", 0, 20 * ms, wall - int64(3*ms), 17 * ms},
		{"before the previous arrival", 0, 21 * ms, wall - int64(10*ms), 17 * ms},
		{"from the future", 0, 30 * ms, wall + int64(ms), 30 * ms},
		{"after a future one: not before it", 0, 31 * ms, wall - int64(5*ms), 30 * ms},
		{"another path has its own", 1, 31 * ms, wall - int64(5*ms), 26 * ms},
		{"far past: the path's previous", 1, 40 * ms, 1, 26 * ms},
		{"no such path: now", 5, 40 * ms, wall - int64(ms), 40 * ms},
	} {
		require.Equal(t, tt.want, e.arrival(tt.path, tt.now, read, tt.stamp), tt.name)
	}
}

// TestArrivalOff: without Config.ArrivalTimes every datagram arrived when
// it is handed over, whatever its stamp.
func TestArrivalOff(t *testing.T) {
	e := &engine{arrived: make([]time.Duration, 1)}
	read := time.Unix(1_764_921_600, 0)
	require.Equal(t, 20*time.Millisecond, e.arrival(0, 20*time.Millisecond, read, read.UnixNano()-int64(3*time.Millisecond)))
	require.Zero(t, e.arrived[0], "an arrival recorded while off")
}
