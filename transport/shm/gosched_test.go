//go:build linux

package shm

import "testing"

// TestGoschedEveryFor: a spinning wait hands the P to this process's
// other goroutines at every poll where a peer rank is a goroutine of this
// process (its wait ends only when that goroutine runs), every
// spinGoschedEvery polls where other transports reach some ranks (their
// goroutines may need the P), and only every spinGoschedEveryAlone polls
// where the whole world is other processes of this host: there each
// Gosched ran the scheduler with nothing of gocoll's to run.
func TestGoschedEveryFor(t *testing.T) {
	for _, c := range []struct {
		inProcess, wholeWorld bool
		want                  int
	}{
		{true, true, 1},
		{true, false, 1},
		{false, false, spinGoschedEvery},
		{false, true, spinGoschedEveryAlone},
	} {
		if got := goschedEveryFor(c.inProcess, c.wholeWorld); got != c.want {
			t.Errorf("goschedEveryFor(inProcess %v, wholeWorld %v) = %d, want %d", c.inProcess, c.wholeWorld, got, c.want)
		}
	}
	if spinGoschedEveryAlone < 4*spinGoschedEvery {
		t.Errorf("spinGoschedEveryAlone %d: a whole world of processes should hand over at most a quarter as often as %d", spinGoschedEveryAlone, spinGoschedEvery)
	}
}

// TestLocalWorldGoschedsEveryPoll: ranks of NewLocalWorld (goroutines of
// one process) hand over the P at every poll of a spin.
func TestLocalWorldGoschedsEveryPoll(t *testing.T) {
	eps, _ := worldOf2(t, Config{})
	for _, e := range eps {
		if e.goschedEvery != 1 {
			t.Fatalf("rank %d of a local world: goschedEvery %d, want 1", e.rank, e.goschedEvery)
		}
	}
}
