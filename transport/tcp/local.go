package tcp

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// NewLocalWorld builds n connected endpoints on this host, rank i at index
// i, all configured by cfg except for Rank (set to i). Leave
// cfg.ListenAddr empty (loopback, port 0): n listeners cannot share a fixed
// port. It is meant for tests and for several ranks in one process. The
// caller closes every endpoint.
func NewLocalWorld(ctx context.Context, n int, cfg Config) ([]*Endpoint, error) {
	if n < 1 || n > MaxWorldSize {
		return nil, fmt.Errorf("tcp: local world of %d ranks (want 1 to %d)", n, MaxWorldSize)
	}
	listeners := make([]*Listener, n)
	addrs := make([]string, n)
	for i := range n {
		c := cfg
		c.Rank = i
		l, err := Listen(ctx, c)
		if err != nil {
			for _, l := range listeners[:i] {
				_ = l.Close()
			}
			return nil, err
		}
		listeners[i], addrs[i] = l, l.Addr()
	}
	eps := make([]*Endpoint, n)
	g, gctx := errgroup.WithContext(ctx)
	for i, l := range listeners {
		g.Go(func() error {
			ep, err := l.Connect(gctx, addrs)
			eps[i] = ep
			return err
		})
	}
	if err := g.Wait(); err != nil {
		for _, ep := range eps {
			if ep != nil {
				_ = ep.Close()
			}
		}
		return nil, err
	}
	return eps, nil
}
