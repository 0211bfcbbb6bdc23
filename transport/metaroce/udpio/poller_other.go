//go:build !linux

package udpio

import (
	"errors"
	"fmt"
	"time"
)

// Poller needs Linux's epoll.
type Poller struct{}

// NewPoller fails with an error wrapping errors.ErrUnsupported.
func NewPoller([]*Socket) (*Poller, error) {
	return nil, fmt.Errorf("udpio: poller: %w", errors.ErrUnsupported)
}

// Ready returns dst.
func (*Poller) Ready(dst []int) ([]int, error) { return dst, nil }

// Wait fails with an error wrapping errors.ErrUnsupported.
func (*Poller) Wait(time.Duration) error {
	return fmt.Errorf("udpio: poller: %w", errors.ErrUnsupported)
}

// Close does nothing.
func (*Poller) Close() error { return nil }

// Add fails with an error wrapping errors.ErrUnsupported.
func (*Poller) Add(int, *Socket) error {
	return fmt.Errorf("udpio: poller: %w", errors.ErrUnsupported)
}
