package store

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/internal/jobkey"
)

// testJobKey is the tests' job key, testJobKeyBytes its text.
var (
	testJobKeyBytes = []byte("job-secret-0123456789")
	testJobKey      = mustKey(string(testJobKeyBytes))
)

func mustKey(text string) jobkey.Key {
	k, err := jobkey.Parse(text)
	if err != nil {
		panic(err)
	}
	return k
}

func init() {
	backends = append(backends, backend{name: "tcp", open: openTCP})
}

// startServer serves a store on a loopback port until the test ends.
func startServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.JobKey.IsZero() {
		cfg.JobKey = testJobKey
	}
	srv, err := Listen(t.Context(), "127.0.0.1:0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// dial connects a client to srv until the test ends.
func dial(t *testing.T, srv *Server) *Client {
	t.Helper()
	c, err := Dial(testCtx(t, long), srv.Addr().String(), ClientConfig{JobKey: testJobKey})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func openTCP(t *testing.T, lim Limits) fixture {
	srv := startServer(t, Config{Limits: lim})
	return fixture{
		handle:   func() Store { return dial(t, srv) },
		shutdown: func() { _ = srv.Close() },
		pending:  srv.tab.pendingWaits,
		keys:     srv.tab.keyCount,
	}
}
