package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The same program, started by Open MPI's mpirun with no gocoll launcher,
// forms its world from OMPI_COMM_WORLD_* and a store that rank 0 serves.
func TestMpirunStartsTheSameProgram(t *testing.T) {
	mpirun := need(t, "mpirun", "test.sh installs Debian's openmpi-bin")
	args := []string{mpirun, "-np", "4", "--oversubscribe", "-x", "GOCOLL_JOB_KEY"} // the value from the environment, off argv
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	o := runFor(t, 2*time.Minute, []string{"GOCOLL_JOB_KEY=mpirun-test-job-key"}, append(args, bins.collcheck)...)
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	got := okLines(t, o.stdout)
	require.Len(t, got, 4)
	for r := range 4 {
		require.Equal(t, r, got[r].local)
	}
	require.Regexp(t, regexp.MustCompile(`(?m)^launched by openmpi, job ompi-\d+, store 127\.0\.0\.1:\d+$`), o.stdout)
}

// The same program under Slurm's srun, on a one-node cluster this test
// starts and stops (testdata/slurm.sh): srun -n 4 on 2 CPUs.
func TestSrunStartsTheSameProgram(t *testing.T) {
	needRoot(t, "starts slurmctld, slurmd and munged")
	for _, cmd := range []string{"slurmctld", "slurmd", "munged"} {
		need(t, cmd, "test.sh installs Debian's slurm-wlm and munge")
	}
	srun := need(t, "srun", "test.sh installs Debian's slurm-wlm")
	dir := t.TempDir()
	script, err := filepath.Abs("testdata/slurm.sh")
	require.NoError(t, err)
	t.Cleanup(func() {
		if out, err := exec.Command(script, "down", dir).CombinedOutput(); err != nil {
			t.Errorf("slurm.sh down: %v\n%s", err, out)
		}
	})
	if out, err := exec.Command(script, "up", dir).CombinedOutput(); err != nil {
		t.Fatalf("slurm.sh up: %v\n%s", err, out)
	}
	o := runFor(t, 2*time.Minute, []string{"GOCOLL_JOB_KEY=srun-test-job-key-0"}, srun, "-n", "4", "-t", "5", bins.collcheck)
	require.Equal(t, 0, o.code, "stdout:\n%s\nstderr:\n%s", o.stdout, o.stderr)
	got := okLines(t, o.stdout)
	require.Len(t, got, 4)
	for r := range 4 {
		require.Equal(t, r, got[r].local)
	}
	require.Regexp(t, regexp.MustCompile(`(?m)^launched by slurm, job slurm-\d+\.\d+, store 127\.0\.0\.1:\d+$`), o.stdout)
}
