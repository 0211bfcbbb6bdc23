//go:build linux

package shm_test

import (
	"context"
	"testing"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/shm"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// newTestWorld builds n endpoints in this process and closes them at the
// end of t.
func newTestWorld(t *testing.T, n int, cfg shm.Config) []*shm.Endpoint {
	t.Helper()
	eps, err := shm.NewLocalWorld(context.Background(), n, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, ep := range eps {
			_ = ep.Close()
		}
	})
	return eps
}

// defaultWorld is newTestWorld with the default Config, as
// transport.Endpoints: the conformance suite's and the allocation test's.
func defaultWorld(t *testing.T, size int) []transport.Endpoint {
	eps := newTestWorld(t, size, shm.Config{})
	out := make([]transport.Endpoint, size)
	for i, ep := range eps {
		out[i] = ep
	}
	return out
}

func TestConformance(t *testing.T) {
	transporttest.Run(t, defaultWorld)
}
