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
		{"older than maxStampAge: that", 1, 200 * ms, wall - int64(80*ms), 200*ms - maxStampAge},
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

// TestArrivalWallStep (review C15 F1): a read whose wall clock moved
// against the monotonic one by more than a slew since the previous read
// trusts none of its stamps, since a stamp taken before the step would
// shift its arrival by the step; the next steady read trusts them again.
func TestArrivalWallStep(t *testing.T) {
	ms := time.Millisecond
	e := &engine{arrived: make([]time.Duration, 1), arrivalTimes: true}
	const epoch = int64(1_764_921_600_000_000_000)
	for _, tt := range []struct {
		name string
		mono time.Duration // the read's monotonic time since start
		wall int64         // and its wall clock
		want bool
	}{
		{"first read", 10 * ms, epoch + int64(10*ms), true},
		{"steady", 20 * ms, epoch + int64(20*ms), true},
		{"slewed 500 ppm over 1 s", 1020 * ms, epoch + int64(1020*ms) + int64(500*time.Microsecond), true},
		{"stepped 50 ms forward", 1030 * ms, epoch + int64(1080*ms) + int64(500*time.Microsecond), false},
		{"steady after the step", 1040 * ms, epoch + int64(1090*ms) + int64(500*time.Microsecond), true},
		{"stepped 2 ms back", 1041 * ms, epoch + int64(1089*ms) + int64(500*time.Microsecond), false},
	} {
		require.Equal(t, tt.want, e.wallSteady(tt.mono, tt.wall), tt.name)
	}

	// Through arrival: the first read sets the offset; a read 20 ms later
	// whose wall clock stepped 50 ms hands its 3 ms old stamp over as now.
	e = &engine{arrived: make([]time.Duration, 1), arrivalTimes: true}
	e.start = time.Now()
	read := e.start.Add(10 * ms)
	require.Equal(t, 7*ms, e.arrival(0, 10*ms, read, read.UnixNano()-int64(3*ms)))
	e.offset += 50 * ms // as if the previous read had seen the wall 50 ms behind
	read = e.start.Add(30 * ms)
	require.Equal(t, 30*ms, e.arrival(0, 30*ms, read, read.UnixNano()-int64(3*ms)), "a stamp across a step was trusted")
	read = e.start.Add(40 * ms)
	require.Equal(t, 37*ms, e.arrival(0, 40*ms, read, read.UnixNano()-int64(3*ms)), "a steady read after the step is not trusted")
}

// TestArrivalStepSeenOnAnotherPath (review B16 F1): each path socket has
// its own reader goroutine, but the wall clock's offset is one per engine.
// A datagram stamped on path 1 before a wall-clock step, read after path
// 0's reader has already seen (and absorbed) the step, must not be
// trusted: its arrival would be early by the step (up to maxStampAge).
// A stamp taken after the step, read later on path 1, is trusted again.
func TestArrivalStepSeenOnAnotherPath(t *testing.T) {
	ms := time.Millisecond
	const step = 30 * time.Millisecond
	e := &engine{arrived: make([]time.Duration, 2), arrivalTimes: true}
	e.start = time.Now()
	wallAt := func(mono time.Duration) int64 { return e.start.Add(mono).UnixNano() } // after the step
	// 1000 ms: path 0 reads a datagram (stamp 1 ms old); before the step,
	// so the wall clock then read step less than it reads now.
	read := e.start.Add(1000 * ms)
	e.arrival(0, 1000*ms, read, wallAt(999*ms))
	e.offset -= step // the offset that read saw: the wall clock 30 ms behind
	// 1005 ms: a datagram arrives on path 1; its stamp is on the old wall clock.
	stamp1 := wallAt(1005*ms) - int64(step)
	// 1010 ms: the wall clock steps 30 ms forward.
	// 1020 ms: path 0's reader reads a datagram of 1019 ms: the step is seen.
	read = e.start.Add(1020 * ms)
	got0 := e.arrival(0, 1020*ms, read, wallAt(1019*ms))
	require.Equal(t, 1020*ms, got0, "path 0's read across the step should not be trusted")
	// 1021 ms: path 1's reader reads the datagram of 1005 ms.
	read = e.start.Add(1021 * ms)
	got1 := e.arrival(1, 1021*ms, read, stamp1)
	t.Logf("path 1's datagram arrived at 1005 ms; handed to the core as %v", got1)
	require.GreaterOrEqual(t, got1, 1005*ms, "a stamp taken before the step, read on another path after the step was seen, was trusted")
	// 1030 ms: path 1 reads a datagram stamped (after the step) at 1027 ms.
	read = e.start.Add(1030 * ms)
	require.Equal(t, 1027*ms, e.arrival(1, 1030*ms, read, wallAt(1027*ms)), "a stamp after the step was not trusted")
}
