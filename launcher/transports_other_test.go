//go:build !linux

package launcher

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// Without shared memory (not Linux), the transports that use it within a
// host use their network transport there too, and shm alone fails saying
// why.
func TestTransportsWithoutSharedMemory(t *testing.T) {
	for _, tr := range []struct{ name, used string }{
		{TransportSHMTCP, TransportTCP},
		{TransportAuto, TransportMetaRoCE}, // the default
		{TransportSHMMetaRoCE, TransportMetaRoCE},
	} {
		t.Run(tr.name, func(t *testing.T) {
			addr := testStore(t)
			const n = 2 // both on host h0
			worlds := joinAllOK(t, n, func(r int) []string { return rankEnv(t, addr, r, n, EnvTransport+"="+tr.name) })
			sumRanks(t, worlds)
			for _, w := range worlds {
				require.Equal(t, tr.used, w.Job().Transport)
			}
		})
	}
	t.Run(TransportSHM, func(t *testing.T) {
		ln, err := listenTransport(context.Background(), TransportSHM, transportSpec{Rank: 0, Size: 2, Host: "127.0.0.1"})
		require.Nil(t, ln)
		require.ErrorIs(t, err, errors.ErrUnsupported)
		require.Contains(t, err.Error(), "needs Linux")
	})
}
