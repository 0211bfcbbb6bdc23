package mrtransport

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
)

// TestStallSaid: a rank whose engine does not run for 300 ms (its mutex
// held, as a process left unscheduled) while it waits on a receive comes
// ~250 ms late to its keepalive timer: it logs, at info, that it was not
// scheduled, with the stall; a stall under stallWarnMin is no warning.
func TestStallSaid(t *testing.T) {
	var buf lockedBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	eps := newTestWorld(t, 2, Config{Paths: 1, Logger: log, Core: metaroce.Config{PeerTimeout: 400 * time.Millisecond}})
	e := eps[1].eng
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 9, Op: 1}}
	rr := eps[1].Recv(0, tag, make([]byte, 64)) // rank 1 waits on rank 0: keepalives every 50 ms
	time.Sleep(20 * time.Millisecond)
	e.lock()
	time.Sleep(300 * time.Millisecond) // the engine does not run
	e.mu.Unlock()
	const msg = `msg="mrtransport: process not scheduled`
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), msg) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	var said string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, msg) {
			said = l
			break
		}
	}
	require.NotEmpty(t, said, "the stall was not said:\n%s", buf.String())
	require.Contains(t, said, "level=INFO")
	require.Contains(t, said, "rank=1")
	require.Regexp(t, `peak=[0-9.]+m?s late=[0-9.]+m?s runs=[0-9]+`, said)
	ctx := testCtx(t)
	_, err := eps[0].Send(1, tag, make([]byte, 64)).Wait(ctx)
	require.NoError(t, err)
	_, err = rr.Wait(ctx)
	require.NoError(t, err)
}

// TestStallNoteLimits: stallNote's levels and pacing, on the core's
// counters as they would move: stalls under stallNoticeMin are not said;
// one line per stallNoticeEvery, with what came between; a warning for a
// stall of stallWarnMin or more, once per stallWarnEvery.
func TestStallNoteLimits(t *testing.T) {
	var buf lockedBuffer
	n := &stallNote{log: slog.New(slog.NewTextHandler(&buf, nil))}
	lines := func() []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if l != "" {
				out = append(out, l)
			}
		}
		return out
	}
	step := func(now, late time.Duration) {
		n.late, n.runs = n.late-late, n.runs-1 // as if the core credited late since the last look
		e := &engine{stall: *n}
		e.core, _ = metaroce.NewEndpoint(metaroce.Config{NodeID: 1})
		e.noteStall(now)
		*n = e.stall
	}
	step(time.Second, 100*time.Millisecond) // under stallNoticeMin
	require.Empty(t, lines())
	step(2*time.Second, 300*time.Millisecond)
	require.Len(t, lines(), 1)
	require.Contains(t, lines()[0], "level=INFO")
	step(2500*time.Millisecond, 400*time.Millisecond) // within stallNoticeEvery: held
	require.Len(t, lines(), 1)
	step(3500*time.Millisecond, 1500*time.Millisecond)
	require.Len(t, lines(), 2)
	require.Contains(t, lines()[1], "level=WARN")
	require.Contains(t, lines()[1], "peak=1.5s late=1.9s runs=2")
	step(5*time.Second, 2*time.Second) // a warning a minute at most
	require.Len(t, lines(), 3)
	require.Contains(t, lines()[2], "level=INFO")
}
