package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/launcher"
	"github.com/gocoll/gocoll/launcher/job"
)

func TestParseSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{"5": 5 * time.Second, "2.5": 2500 * time.Millisecond, "0": 0, "90s": 90 * time.Second, "1h": time.Hour} {
		got, err := parseSeconds(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "soon", "-1", "-5s", "NaN", "1e300", "5 s"} {
		_, err := parseSeconds(in)
		require.Error(t, err, in)
	}
}

// gocoll run's command line: no panic, errors in one line, and what is
// accepted is within the limits.
func FuzzParseRun(f *testing.F) {
	f.Add("-np 2 -- /bin/true")
	f.Add("-n 4 --timeout 2.5 --tag-output=false -x A=1 prog")
	f.Add("--bogus -H a:2,b --oversubscribe prog")
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		spec, err := parseRun(args, nil)
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		require.NotEmpty(t, spec.Program)
		require.GreaterOrEqual(t, spec.Timeout, time.Duration(0))
		require.LessOrEqual(t, spec.Timeout, maxSeconds)
		require.GreaterOrEqual(t, spec.NP, 0)
	})
}

// --rdzv-timeout takes seconds; 0 is refused (job.Spec would take it for
// the default, which the flag already has), none means the default.
func TestParseRunRdzvTimeout(t *testing.T) {
	spec, err := parseRun([]string{"-np", "2", "--rdzv-timeout", "7", "prog"}, nil)
	require.NoError(t, err)
	require.Equal(t, 7*time.Second, spec.RdzvTimeout)
	spec, err = parseRun([]string{"-np", "2", "prog"}, nil)
	require.NoError(t, err)
	require.Equal(t, job.DefaultRdzvTimeout, spec.RdzvTimeout)
	_, err = parseRun([]string{"-np", "2", "--rdzv-timeout", "0", "prog"}, nil)
	require.ErrorContains(t, err, "--rdzv-timeout 0")
}

// --diagnose-wait takes seconds into Spec.DiagnoseWait; none means
// launcher.DefaultDiagnoseWait; 0 and more than job.MaxDiagnoseWait are
// refused, naming the flag.
func TestParseRunDiagnoseWait(t *testing.T) {
	spec, err := parseRun([]string{"-np", "2", "--diagnose-wait", "2.5", "prog"}, nil)
	require.NoError(t, err)
	require.Equal(t, 2500*time.Millisecond, spec.DiagnoseWait)
	spec, err = parseRun([]string{"-np", "2", "prog"}, nil)
	require.NoError(t, err)
	require.Equal(t, launcher.DefaultDiagnoseWait, spec.DiagnoseWait)
	for _, bad := range []string{"0", "61", "-1", "soon"} {
		_, err = parseRun([]string{"-np", "2", "--diagnose-wait", bad, "prog"}, nil)
		require.ErrorContains(t, err, "diagnose-wait", bad)
	}
}
