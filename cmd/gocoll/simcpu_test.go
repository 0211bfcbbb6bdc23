package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gocoll sim --topology of a file with CPU figures (a job's dump: cores
// of the ranks' machines, each level's CPU a byte and a message, and the
// reduction's CPU a byte)
// predicts as for the same file without them: the simulated fabric has
// no CPU cost, so the model beside it leaves the CPU term out (with it,
// one core for 4 ranks at these figures binds every phase).
func TestSimIgnoresCPUFigures(t *testing.T) {
	write := func(cpu bool) string {
		var ranks []string
		for r := range 4 {
			rank := `{"rank": ` + strconv.Itoa(r) + `, "host": "h` + strconv.Itoa(r/2) + `", "local_rank": ` + strconv.Itoa(r%2)
			if cpu {
				rank += `, "cpu": {"machine": "lab", "cores": 1}`
			}
			ranks = append(ranks, rank+`}`)
		}
		cpuHost, cpuSite, reduce := "", "", ""
		if cpu {
			cpuHost, cpuSite = `, "cpu_per_byte": 5e-10, "cpu_per_byte_busy": 8e-10, "cpu_per_message": "10us"`, `, "cpu_per_byte": 2e-9, "cpu_per_message": "40us"`
			reduce = `, "reduce_per_byte": 1e-9`
		}
		path := filepath.Join(t.TempDir(), "topo.json")
		require.NoError(t, os.WriteFile(path, []byte(`{"version": 2, "ranks": [`+strings.Join(ranks, ",")+`], "levels": {`+
			`"host": {"latency": "5us", "bandwidth": 4e9`+cpuHost+`},`+
			`"site": {"latency": "50us", "bandwidth": 1e9`+cpuSite+`}}`+reduce+`}`), 0o644))
		return path
	}
	sim := func(path string) []string {
		var out, errOut bytes.Buffer
		require.Equal(t, 0, run(context.Background(), []string{"sim", "--topology", path, "--algo", "all", "allreduce", "4M"}, nil, &out, &errOut, nil), errOut.String())
		var rows []string
		for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
			if f := strings.Fields(line); len(f) >= 9 {
				rows = append(rows, strings.Join(f[:8], " ")) // all but the wall time
			}
		}
		return rows
	}
	with, without := sim(write(true)), sim(write(false))
	t.Logf("with CPU figures:\n%s", strings.Join(with, "\n"))
	require.Greater(t, len(with), 2)
	require.Equal(t, without, with)
}
