package bench

import (
	"hash/crc32"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFreshChangesEveryCall runs Broadcast in process with and without
// --fresh and records the root's send buffer at each timed and warm-up
// call (out of place its send buffer, in place its receive buffer, which
// a root's call leaves alone): with --fresh consecutive calls differ on
// every page, without it they are the same bytes; the checked calls of
// every rank are right either way.
func TestFreshChangesEveryCall(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		var mu sync.Mutex
		calls := map[*byte][][]byte{}
		callHook = func(rank int, _ collKind, send []byte) {
			if rank != 0 || len(send) == 0 {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			calls[&send[0]] = append(calls[&send[0]], append([]byte(nil), send...))
		}
		args := []string{"broadcast", "-r", "0", "--in-process", "--transport", "inproc", "-np", "3",
			"--sizes", "24K", "-n", "3", "-w", "1", "-c", "1", "--json"}
		if fresh {
			args = append(args, "--fresh")
		}
		code, out, errOut := runBench(t, args...)
		callHook = nil
		require.Equal(t, ExitOK, code, errOut)
		for _, r := range decodeRows(t, out) {
			require.Zero(t, *r.Wrong, "fresh=%v %s", fresh, r.Coll)
		}
		require.Len(t, calls, 2, "out of place and in place")
		for _, seq := range calls {
			require.GreaterOrEqual(t, len(seq), 4, "fresh=%v: warm-up and timed calls", fresh)
			for i := 1; i < len(seq); i++ {
				prev, cur := seq[i-1], seq[i]
				require.Len(t, cur, len(prev))
				for p := 0; p < len(cur); p += freshPage {
					end := min(p+freshPage, len(cur))
					same := crc32.ChecksumIEEE(prev[p:end]) == crc32.ChecksumIEEE(cur[p:end])
					require.Equal(t, !fresh, same, "fresh=%v: call %d page %d", fresh, i, p/freshPage)
				}
			}
		}
	}
}

// TestFreshFlag parses --fresh.
func TestFreshFlag(t *testing.T) {
	o, err := ParseArgs([]string{"broadcast", "--fresh"})
	require.NoError(t, err)
	require.True(t, o.Fresh)
	o, err = ParseArgs([]string{"broadcast"})
	require.NoError(t, err)
	require.False(t, o.Fresh)
}
