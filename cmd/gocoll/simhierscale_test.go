package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSimHierScale: a payload-free hierarchical run keeps its top ring's
// messages out of the operation headers (simHierScale): 4 x 8 x 8 at 4
// MiB runs at scale 4, not 16, where a top ring's 16 KiB messages were 1
// KiB and each pair's first rode in its header, unscaled: 61.8 ms, sim/
// model 0.874, against 70.0 in the data mode.
func TestSimHierScale(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"sim", "--sites", "4", "--hosts-per-site", "8", "--ranks-per-host", "8",
		"--algo", "hierarchical", "--payload", "free", "allreduce", "4M"}, nil, &out, &errOut, nil)
	require.Equal(t, 0, code, errOut.String())
	rows := 0
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || f[1] != "hierarchical" {
			continue
		}
		rows++
		require.Equal(t, "free/4", f[2], line)
		r, err := strconv.ParseFloat(f[7], 64)
		require.NoError(t, err, line)
		require.InDelta(t, 1, r, 0.05, "sim/model of %s", line)
	}
	require.Equal(t, 1, rows, out.String())
	// 1024 ranks at 64 MiB would need scale 2, 32 GiB of buffers: kept.
	require.Equal(t, 64, simHierScale(64, 64<<20, 512<<10, 1024))
}
