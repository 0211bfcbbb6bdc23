package launcher

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gocoll/gocoll/transport"
)

// Three ranks, rank 0 serving the store, rank 2 never comes; rank 0's
// connect timeout is 2 s, rank 1's 60 s. Rank 0 gives up and its store
// goes with it: rank 1 fails at once with a *transport.PeerError naming
// rank 0 (wrapping ErrRankLeft: rank 0's note), and its error names rank
// 2, the rank missing, as rank 0's does. (Before rank 0 left a note, rank
// 1 said only that the store rank 0 serves went away.)
func TestServedStoreTimeoutNamesTheMissingRank(t *testing.T) {
	if testing.Short() {
		t.Skip("2 s of connect timeout")
	}
	addr := freeAddr(t)
	const n = 3
	bg := context.Background()
	errs := startJoins(t, n, map[int]context.Context{0: bg, 1: bg}, func(r int) []string {
		to := "=60s"
		if r == 0 {
			to = "=2s"
		}
		return rankEnv(t, addr, r, n, EnvStoreServe+"=1", EnvConnectTimeout+to)
	})()
	for r := range 2 {
		t.Logf("rank %d: %v", r, errs[r])
	}
	if !errors.Is(errs[0], context.DeadlineExceeded) || !strings.Contains(errs[0].Error(), "ranks [2] missing") {
		t.Errorf("rank 0: %v, want a timeout with rank 2 missing", errs[0])
	}
	var pe *transport.PeerError
	if !errors.As(errs[1], &pe) || pe.Rank != 0 || !errors.Is(errs[1], ErrRankLeft) {
		t.Errorf("rank 1: %v, want a *transport.PeerError naming rank 0, which left", errs[1])
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "ranks [2] missing") {
		t.Errorf("rank 1: %v, want it to name rank 2, missing", errs[1])
	}
}
