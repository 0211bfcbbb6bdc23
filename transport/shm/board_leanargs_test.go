//go:build linux

package shm_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/dtype"
)

// TestBoardLeanBadArgs: in steady state for a 1-element int64 Broadcast
// (the lean path's), calls with the same header but bad buffers fail
// with the generic path's error on every rank, never run the lean way:
// a buffer of 12 bytes (1 element and a part), and at the root (out of
// place) a send buffer longer than recv, or one overlapping it.
func TestBoardLeanBadArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		bufs func(r int) (send, recv []byte)
		want string
	}{
		{"partial element", func(int) ([]byte, []byte) { b := make([]byte, 12); return b, b }, "whole number"},
		{"send longer", func(r int) ([]byte, []byte) {
			if r == 0 {
				return make([]byte, 16), make([]byte, 8)
			}
			b := make([]byte, 8)
			return b, b
		}, "send buffer has 16 bytes"},
		{"overlap", func(r int) ([]byte, []byte) {
			b := make([]byte, 12)
			if r == 0 {
				return b[:8], b[4:12]
			}
			return b[:8], b[:8]
		}, "overlap"},
	} {
		comms := leanComms(t)
		errs := make([]error, len(comms))
		var wg sync.WaitGroup
		for r, c := range comms {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				send, recv := tc.bufs(r)
				errs[r] = c.BroadcastBytes(ctx, send, recv, dtype.Int64, 0)
			})
		}
		wg.Wait()
		for r, err := range errs {
			if tc.name != "partial element" && r != 0 {
				continue // only the root's buffers are bad
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: rank %d: %v, want an error with %q", tc.name, r, err, tc.want)
			}
		}
	}
}
