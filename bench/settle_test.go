package bench

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// --settle takes a duration or seconds within [0, SettleMax], and every
// rank spins it once, before its first measurement; without it no rank
// does.
func TestSettleOption(t *testing.T) {
	o, err := ParseArgs([]string{"allreduce", "--settle", "20ms"})
	require.NoError(t, err)
	require.Equal(t, 20*time.Millisecond, o.Settle)
	o, err = ParseArgs([]string{"allreduce", "--settle", "0.5"})
	require.NoError(t, err)
	require.Equal(t, 500*time.Millisecond, o.Settle)
	for _, bad := range []string{"-1ms", "-2", "11s", "x", "NaN", "1e9"} {
		_, err := ParseArgs([]string{"allreduce", "--settle", bad})
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "settle", bad)
	}

	var calls atomic.Int64
	settleHook = func(time.Duration) { calls.Add(1) }
	t.Cleanup(func() { settleHook = nil })
	code, _, errOut := runBench(t, withQuick("allreduce,broadcast", "--transport", "inproc", "-np", "3", "--settle", "1ms")...)
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, int64(3), calls.Load(), "once per rank, not per size or collective")

	calls.Store(0)
	code, _, errOut = runBench(t, withQuick("allreduce", "--transport", "inproc", "-np", "3")...)
	require.Equal(t, ExitOK, code, errOut)
	require.Zero(t, calls.Load(), "off by default")
}
