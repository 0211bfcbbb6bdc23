//go:build !linux

package shm

import (
	"context"
	"errors"

	"github.com/gocoll/gocoll/transport"
)

// Supported reports whether this platform has the shared-memory transport
// at all. It is false here: Listen and NewLocalWorld fail with an error
// that matches [errors.ErrUnsupported], and a job reaches every rank
// through a network transport.
const Supported = false

// errUnsupported is the error of every call that would need the transport.
var errUnsupported error = unsupportedError{}

// unsupportedError says that this platform lacks the transport and matches
// errors.ErrUnsupported.
type unsupportedError struct{}

func (unsupportedError) Error() string {
	return "shm: the shared-memory transport needs Linux (memfd, eventfd); use tcp or metaroce"
}

func (unsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }

// Listener is never made on this platform; its methods exist so that
// callers build.
type Listener struct{}

// Endpoint is never made on this platform.
type Endpoint struct{ transport.Endpoint }

// Listen fails: see [Supported].
func Listen(Config) (*Listener, error) { return nil, errUnsupported }

// NewLocalWorld fails: see [Supported].
func NewLocalWorld(context.Context, int, Config) ([]*Endpoint, error) { return nil, errUnsupported }

// Addr is the zero address.
func (*Listener) Addr() Addr { return Addr{} }

// SameHost is false: no rank is reachable through shared memory here.
func (*Listener) SameHost(string) bool { return false }

// Close does nothing.
func (*Listener) Close() error { return nil }

// Connect fails: see [Supported].
func (*Listener) Connect(context.Context, []string) (*Endpoint, error) {
	return nil, errUnsupported
}
