//go:build linux

package collective_test

import (
	"context"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport/shm"
)

// shmComms returns n communicators of cfg over an in-process
// shared-memory world (shm.NewLocalWorld, made within 30 s), and their
// endpoints, which close at the end of tb.
func shmComms(tb testing.TB, n int, cfg collective.Config) ([]*collective.Comm, []*shm.Endpoint) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eps, err := shm.NewLocalWorld(ctx, n, shm.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	comms := make([]*collective.Comm, n)
	for r, ep := range eps {
		tb.Cleanup(func() { _ = ep.Close() })
		if comms[r], err = collective.New(ep, 1, cfg); err != nil {
			tb.Fatal(err)
		}
	}
	return comms, eps
}
