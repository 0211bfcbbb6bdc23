//go:build !linux

package shm

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// Without Linux, every way into the transport fails saying why, with an
// error that matches errors.ErrUnsupported.
func TestUnsupportedHere(t *testing.T) {
	require.False(t, Supported)
	check := func(err error) {
		t.Helper()
		require.Error(t, err)
		require.ErrorIs(t, err, errors.ErrUnsupported)
		require.Contains(t, err.Error(), "needs Linux")
	}
	l, err := Listen(Config{Rank: 0, Size: 2})
	require.Nil(t, l)
	check(err)
	eps, err := NewLocalWorld(context.Background(), 2, Config{})
	require.Nil(t, eps)
	check(err)
	var zero Listener
	require.False(t, zero.SameHost(Addr{BootID: "0123456789abcdef", PIDNS: 1, PID: 1}.String()))
	_, err = zero.Connect(context.Background(), []string{"", ""})
	check(err)
	require.NoError(t, zero.Close())
}
