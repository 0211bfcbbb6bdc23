package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/launcher/job"
)

// --map-by and --bind-to reach the job's spec; bad values are one line
// naming the valid ones (the job's check, before any rank starts).
func TestRunMappingFlags(t *testing.T) {
	spec, err := parseRun([]string{"-np", "2", "--map-by", "node", "--bind-to", "core", "prog"}, nil)
	require.NoError(t, err)
	require.Equal(t, job.MapByNode, spec.MapBy)
	require.Equal(t, job.BindCore, spec.BindTo)
	spec, err = parseRun([]string{"-np", "2", "prog"}, nil)
	require.NoError(t, err)
	require.Equal(t, job.MapBySlot, spec.MapBy)
	require.Equal(t, job.BindNone, spec.BindTo)

	for args, want := range map[string]string{
		"--map-by":  `gocoll run: --map-by "socket": want slot or node`,
		"--bind-to": `gocoll run: --bind-to "numa": want core or none`,
	} {
		val := map[string]string{"--map-by": "socket", "--bind-to": "numa"}[args]
		o := gocollRun(t, time.Minute, "-np", "1", args, val, "--", "/bin/true")
		require.Equal(t, exitUsage, o.code)
		require.Empty(t, o.stdout)
		require.Equal(t, want+"\n", o.stderr)
	}
}
