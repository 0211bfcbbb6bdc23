package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSchedstat(t *testing.T) {
	run, wait, err := parseSchedstat([]byte("1288380 4198477 9\n"))
	require.NoError(t, err)
	require.Equal(t, int64(1288380), run)
	require.Equal(t, int64(4198477), wait)
	for _, bad := range []string{"", "12", "x 1 2", "1 y 2", "-1 2 3"} {
		_, _, err := parseSchedstat([]byte(bad))
		require.Error(t, err, "%q", bad)
	}
}

// TestDeltasCountOnlyWhatHappenedBetweenSamples: a thread first seen
// adds nothing (its counters cover its life before), a thread gone adds
// nothing more, and a counter that went back (a reused TID) restarts.
func TestDeltasCountOnlyWhatHappenedBetweenSamples(t *testing.T) {
	d := newDeltas()
	run, wait, n := d.add([]threadStat{{"1/1", 100, 50}, {"1/2", 1000, 0}})
	require.Equal(t, [3]int64{0, 0, 2}, [3]int64{run, wait, int64(n)})
	run, wait, n = d.add([]threadStat{{"1/1", 130, 60}, {"1/2", 1005, 7}, {"1/3", 5000, 5000}})
	require.Equal(t, [3]int64{35, 17, 3}, [3]int64{run, wait, int64(n)})
	run, wait, n = d.add([]threadStat{{"1/1", 140, 60}, {"1/3", 10, 1}})
	require.Equal(t, [3]int64{10, 0, 2}, [3]int64{run, wait, int64(n)})
	run, wait, _ = d.add([]threadStat{{"1/1", 140, 60}, {"1/3", 20, 3}})
	require.Equal(t, [2]int64{10, 2}, [2]int64{run, wait})
}

func TestGroupFlag(t *testing.T) {
	var g groupFlags
	require.NoError(t, g.Set("job=bench allreduce"))
	require.Equal(t, groupFlags{{"job", "bench allreduce"}}, g)
	for _, bad := range []string{"job", "=x", "job=", "a b=x"} {
		require.Error(t, g.Set(bad), "%q", bad)
	}
}

// TestGroupMatches: a group's text matches the command line, NULs read as
// blanks; an env: group matches a whole entry of the environment only.
func TestGroupMatches(t *testing.T) {
	cmd := []byte("gocoll\x00bench\x00allreduce\x00")
	env := []byte("PATH=/bin\x00STALL_LAB_TAG=t1\x00GOCOLL_RANK=3\x00")
	require.True(t, group{"job", "bench allreduce"}.matches(cmd, env))
	require.False(t, group{"job", "bench broadcast"}.matches(cmd, env))
	require.True(t, group{"job", "env:STALL_LAB_TAG=t1"}.matches(cmd, env))
	for _, other := range []string{"env:STALL_LAB_TAG=t", "env:STALL_LAB_TAG=t10", "env:TAG=t1", "env:bench"} {
		require.False(t, group{"job", other}.matches(cmd, env), other)
	}
	require.False(t, group{"job", "env:STALL_LAB_TAG=t1"}.matches(cmd, nil))
}
