//go:build unix

package main

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireGone checks that none of pids is still running.
func requireGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		err := syscall.Kill(pid, 0)
		require.ErrorIs(t, err, syscall.ESRCH, "pid %d is still running", pid)
	}
}
