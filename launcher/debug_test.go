package launcher

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSubsys(t *testing.T) {
	for in, want := range map[string]Subsys{
		"": DefaultSubsys, "INIT": SubsysInit, "coll": SubsysColl, "INIT, coll": SubsysInit | SubsysColl,
		"ALL": SubsysAll, "^COLL": SubsysInit | SubsysNet, "^ALL": 0, "NET,ALL": SubsysAll,
	} {
		got, err := ParseSubsys(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	require.Equal(t, "INIT,NET", DefaultSubsys.String())
	for _, in := range []string{"GRAPH", "INIT,", "^", "INIT;NET"} {
		_, err := ParseSubsys(in)
		require.ErrorContains(t, err, "GOCOLL_DEBUG_SUBSYS=", in)
		require.ErrorContains(t, err, "want a comma-separated list of INIT, NET, COLL or ALL", in)
	}
	_, err := ParseEnv(LookupIn([]string{"GOCOLL_RANK=0", "GOCOLL_WORLD_SIZE=1", "GOCOLL_STORE=127.0.0.1:1",
		"GOCOLL_JOB_KEY=h9-a-job-key-long-enough", "GOCOLL_DEBUG_SUBSYS=TUNING"}))
	require.ErrorContains(t, err, `unknown subsystem "TUNING"`)
}

// A subsystem that is off drops its lines below a warning, not its
// warnings.
func TestSubsysLogger(t *testing.T) {
	var b bytes.Buffer
	base := slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelInfo}))
	job := Job{DebugSubsys: SubsysColl}
	off, on := subsysLogger(base, job, SubsysInit).With("rank", 1), subsysLogger(base, job, SubsysColl)
	off.Info("hidden")
	require.False(t, off.Enabled(context.Background(), slog.LevelInfo))
	off.Warn("a warning")
	on.Info("shown")
	require.NotContains(t, b.String(), "hidden")
	require.Contains(t, b.String(), `msg="a warning" rank=1`)
	require.Contains(t, b.String(), `msg=shown`)
}
