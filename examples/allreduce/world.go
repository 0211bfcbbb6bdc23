package main

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
	"github.com/gocoll/gocoll/transport/metaroce/mrtransport"
	"github.com/gocoll/gocoll/transport/shm"
	"github.com/gocoll/gocoll/transport/tcp"
)

// world is a set of connected endpoints, rank i at index i, all in this
// process, and how to release them.
type world struct {
	endpoints []transport.Endpoint
	close     func() error
}

// openWorldFunc builds a world of n ranks; ctx bounds the setup.
type openWorldFunc func(ctx context.Context, n int) (world, error)

// transports maps each -transport name to the function that builds its
// world. To add a transport, add one entry.
var transports = map[string]openWorldFunc{
	"inproc":   openInproc,
	"tcp":      openTCP,
	"metaroce": openMetaRoCE,
	"shm":      openSHM,
}

// transportNames lists the names in transports, sorted, separated by "|".
func transportNames() string {
	names := make([]string, 0, len(transports))
	for name := range transports {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, "|")
}

// openWorld builds a world of n ranks over the transport called name.
func openWorld(ctx context.Context, name string, n int) (world, error) {
	open, ok := transports[name]
	if !ok {
		return world{}, errors.New("unknown transport " + name)
	}
	return open(ctx, n)
}

// openInproc connects n ranks through memory.
func openInproc(_ context.Context, n int) (world, error) {
	w, err := inproc.NewWorld(n)
	if err != nil {
		return world{}, err
	}
	return world{endpoints: w.Endpoints(), close: w.Close}, nil
}

// openTCP connects n ranks through TCP on loopback, one listener each.
func openTCP(ctx context.Context, n int) (world, error) {
	return endpointsWorld(tcp.NewLocalWorld(ctx, n, tcp.Config{}))
}

// openMetaRoCE connects n ranks through MetaRoCE on loopback: one UDP socket
// per path for each rank.
func openMetaRoCE(ctx context.Context, n int) (world, error) {
	return endpointsWorld(mrtransport.NewLocalWorld(ctx, n, mrtransport.Config{}))
}

// openSHM connects n ranks through shared-memory rings (each rank a
// goroutine here; the same transport connects processes of one host).
func openSHM(ctx context.Context, n int) (world, error) {
	return endpointsWorld(shm.NewLocalWorld(ctx, n, shm.Config{}))
}

// endpointsWorld wraps endpoints that each close on their own.
func endpointsWorld[E transport.Endpoint](eps []E, err error) (world, error) {
	if err != nil {
		return world{}, err
	}
	w := world{endpoints: make([]transport.Endpoint, len(eps))}
	for i, ep := range eps {
		w.endpoints[i] = ep
	}
	w.close = func() error {
		var errs []error
		for _, ep := range eps {
			errs = append(errs, ep.Close())
		}
		return errors.Join(errs...)
	}
	return w, nil
}
