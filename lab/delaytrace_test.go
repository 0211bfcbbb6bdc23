//go:build linux

package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The releaser's add never waits for a trace being written (it holds the
// daemon's lock): while write holds the trace's lock, add returns at once
// and counts the packet; at the cap it counts it too, and the file notes
// both.
func TestDelaydTraceAddNeverWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace")
	tr := newTraceAt(path, 3)
	now := time.Now()
	p := heldPacket{queue: 1, arrive: now, due: now}
	for range 4 {
		tr.add(p, now)
	}
	tr.mu.Lock() // a write under way
	done := make(chan struct{})
	go func() { tr.add(p, now); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("add waited for the trace's lock")
	}
	tr.mu.Unlock()
	require.Equal(t, int64(1), tr.full.Load())
	require.Equal(t, int64(1), tr.skipped.Load())
	require.NoError(t, tr.write())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 3+3, "a header, two notes and the 3 records kept")
	require.Contains(t, lines[1], "cap of 3 records reached: 1 later packets")
	require.Contains(t, lines[2], "1 packets not recorded while a trace was being written")
	require.True(t, strings.HasPrefix(lines[3], "1 0 0 "), "record %q", lines[3])
}
