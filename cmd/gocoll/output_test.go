package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gocoll run -np 2 -- gocoll bench allreduce --json | jq: stdout is one
// JSON object a line (rank 0's, without the prefix, which is for text).
func TestRunBenchJSONParses(t *testing.T) {
	o := gocollRun(t, time.Minute, "-np", "2", "--", bins.gocoll, "bench", "allreduce", "--json", "-b", "1K", "-e", "4K", "-f", "2", "-n", "2")
	require.Equal(t, 0, o.code, o.stderr)
	lines := strings.Split(strings.TrimSuffix(o.stdout, "\n"), "\n")
	require.Len(t, lines, 3, o.stdout)
	dec := json.NewDecoder(strings.NewReader(o.stdout))
	for i := range lines {
		var v map[string]any
		require.NoError(t, dec.Decode(&v), "line %d: %s", i, lines[i])
		require.Contains(t, v, "size")
	}
}

// --tag-output=false and --no-prefix drop the prefix from text too; it is
// on by default.
func TestRunTagOutput(t *testing.T) {
	o := gocollRun(t, 30*time.Second, "-np", "2", "--", "/bin/echo", "hi")
	require.Equal(t, 0, o.code, o.stderr)
	requirePrefixed(t, o.stdout, 2)
	for _, flag := range []string{"--tag-output=false", "--no-prefix"} {
		o := gocollRun(t, 30*time.Second, "-np", "2", flag, "--", "/bin/echo", "hi")
		require.Equal(t, 0, o.code, o.stderr)
		require.Equal(t, "hi\nhi\n", o.stdout, flag)
	}
}
