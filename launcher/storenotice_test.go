package launcher

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/launcher/store"
)

// A stranger at the store rank 0 serves is refused, the job is unaffected,
// and rank 0 says at close how many it refused.
func TestServedStoreRefusesStranger(t *testing.T) {
	addr := freeAddr(t)
	const n = 2
	worlds, errs := make([]*World, n), make([]error, n)
	notices := make([]*bytes.Buffer, n)
	var wg sync.WaitGroup
	for r := range n {
		notices[r] = new(bytes.Buffer)
		job, err := ParseEnv(LookupIn(rankEnv(t, addr, r, n, EnvStoreServe+"=1", EnvTransport+"=tcp")))
		require.NoError(t, err)
		job.notices = notices[r]
		wg.Go(func() { worlds[r], errs[r] = Join(context.Background(), job, collective.Config{}) })
	}
	wg.Wait()
	for r := range n {
		require.NoError(t, errs[r], "rank %d", r)
	}
	stranger, err := store.ParseJobKey("a-stranger-guessing-the-key")
	require.NoError(t, err)
	_, err = store.Dial(context.Background(), addr, store.ClientConfig{JobKey: stranger})
	require.ErrorIs(t, err, store.ErrBadJobKey)

	var done sync.WaitGroup
	for r := range n {
		done.Go(func() {
			x := []int64{int64(r + 1)}
			if err := collective.AllReduce(context.Background(), worlds[r].Comm, x, x, collective.Sum); err != nil || x[0] != 3 {
				t.Errorf("rank %d: AllReduce = %v, %v", r, x, err)
			}
			if err := worlds[r].Close(); err != nil {
				t.Errorf("rank %d: Close: %v", r, err)
			}
		})
	}
	done.Wait()
	require.Regexp(t, `^gocoll: rank 0: the store refused 1 connections without this job's key and 0 frames with a wrong tag `+
		`\(\d+ connections accepted, `+strconv.Itoa(n-1)+` authenticated\)\n$`, notices[0].String())
	require.Empty(t, notices[1].String())
}
