//go:build !linux

package udpio

import (
	"errors"
	"fmt"
)

// TryReader needs Linux: its ReadBatch fails with an error wrapping
// errors.ErrUnsupported.
type TryReader struct{}

// NewTryReader returns a TryReader that cannot read.
func NewTryReader(*Socket, int) *TryReader { return &TryReader{} }

// ReadBatch fails with an error wrapping errors.ErrUnsupported.
func (*TryReader) ReadBatch([]Message) (int, error) {
	return 0, fmt.Errorf("udpio: non-waiting reads: %w", errors.ErrUnsupported)
}
