//go:build unix

package job

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/launcher/store"
)

// A stranger at the store gocoll run serves is refused, the job goes on,
// and the launcher says at the end how many it refused.
func TestRunStoreRefusesStranger(t *testing.T) {
	dir := t.TempDir()
	s, out, errOut := shSpec(1, `echo "store=$GOCOLL_STORE"; i=0; while [ ! -e "$1/go" ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done; echo done`, dir)
	type ran struct {
		res *Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := Run(context.Background(), s)
		done <- ran{res, err}
	}()
	re := regexp.MustCompile(`store=(\S+)`)
	var addr string
	require.Eventually(t, func() bool {
		m := re.FindStringSubmatch(out.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	}, 20*time.Second, 5*time.Millisecond)
	stranger, err := store.ParseJobKey("a-stranger-guessing-the-key")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = store.Dial(ctx, addr, store.ClientConfig{JobKey: stranger})
	require.ErrorIs(t, err, store.ErrBadJobKey)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), nil, 0o644))
	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, 0, r.res.ExitCode())
	require.Contains(t, out.String(), "[rank 0] done")
	require.Regexp(t, `(?m)^gocoll run: the store refused 1 connections without this job's key and 0 frames with a wrong tag \(\d+ connections accepted, \d+ authenticated\)$`, errOut.String())
	require.Equal(t, 1, strings.Count(errOut.String(), "refused"))
}
