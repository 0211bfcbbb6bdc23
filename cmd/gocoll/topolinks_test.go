package main

import (
	"testing"
	"time"

	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/topology"
	"github.com/stretchr/testify/require"
)

// Under gocoll run, gocoll topo --dump writes the job's link figures (here
// GOCOLL_LINKS', as gocoll run's cache sets it), not the assumed ones, and
// --explain predicts with them (its CPU line shows the host's figures).
func TestTopoUnderRunUsesJobLinks(t *testing.T) {
	host := &topology.Link{Latency: 7157 * time.Nanosecond, Bandwidth: 1.2e9, CPUPerByte: 4.75e-9, CPUPerMessage: 78444 * time.Nanosecond}
	env := launcher.EnvLinks + "=" + launcher.FormatLinks(topology.Links{Host: host})
	o := gocollRun(t, 60*time.Second, "-np", "2", "--tag-output=false", "-x", env, "--", bins.gocoll, "topo", "--dump")
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	got, err := topology.Parse([]byte(o.stdout))
	require.NoError(t, err, o.stdout)
	require.NotNil(t, got.Links, o.stdout)
	require.Equal(t, host, got.Links.Host, o.stdout)

	o = gocollRun(t, 60*time.Second, "-np", "2", "-x", env, "--", bins.gocoll, "topo", "--explain", "4M", "--coll", "allreduce")
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	require.Contains(t, o.stdout, "host 4.75 ns (0) / 78.444µs", o.stdout) // the job's CPU figures
}
