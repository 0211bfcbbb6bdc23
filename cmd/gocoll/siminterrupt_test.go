package main

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gocoll sim stops when its context ends (Ctrl-C: main's stopContext),
// as gocoll bench does: exit status 130 and one line saying why, not a
// rank's error.
func TestSimInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(300*time.Millisecond, func() { cancel(errors.New("interrupt signal received")) })
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{"sim", "--sites", "4", "--hosts-per-site", "16", "--ranks-per-host", "8",
		"--wan-delay", "5ms", "--wan-paths", "8", "allreduce", "256M"}, nil, &out, &errOut, nil)
	t.Logf("ended %v after the start (cancelled at 300ms)", time.Since(start).Round(time.Millisecond))
	require.Equal(t, 130, code, errOut.String())
	require.Equal(t, "gocoll sim: interrupted (interrupt signal received)\n", errOut.String())
}
