//go:build unix

package job

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func exitStatus(code int) syscall.WaitStatus { return syscall.WaitStatus(code << 8) }
func killedBy(sig syscall.Signal) syscall.WaitStatus {
	return syscall.WaitStatus(sig)
}

func TestFirstFailure(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	end := func(rank int, st syscall.WaitStatus, at time.Time, last string) RankEnd {
		return RankEnd{Rank: rank, Status: st, Failed: st != 0, Ended: at, Tail: []string{last}, Summary: last}
	}
	cases := []struct {
		name  string
		ranks []RankEnd
		want  int
	}{
		{"none failed", []RankEnd{end(0, 0, ms(0), "ok"), end(1, 0, ms(1), "ok")}, -1},
		{"earliest", []RankEnd{end(0, exitStatus(1), ms(5), "boom"), end(1, exitStatus(2), ms(3), "bang")}, 1},
		{"a peer reaped first blames the dead rank", []RankEnd{
			end(0, exitStatus(1), ms(9), "gocoll: Barrier on rank 0 of 4: rank 3 failed: with rank 2: reset"),
			end(1, exitStatus(1), ms(8), "gocoll: Barrier on rank 1 of 4: with rank 2: rank 2: reset"),
			end(2, exitStatus(7), ms(10), "rank 2 exits with status 7"),
			end(3, exitStatus(1), ms(7), "gocoll: Barrier on rank 3 of 4: with rank 2: rank 2: reset"),
		}, 2},
		{"killed by a signal beats an exit", []RankEnd{
			end(0, exitStatus(1), ms(0), "error without names"),
			end(1, killedBy(syscall.SIGKILL), ms(2), "looping"),
		}, 1},
		{"blame of a rank reaped much later", []RankEnd{
			end(0, exitStatus(1), ms(0), "with rank 1: reset"),
			end(1, killedBy(syscall.SIGKILL), ms(500), "looping"),
		}, 1},
		{"a signal long after the earliest does not count", []RankEnd{
			end(0, exitStatus(1), ms(0), "first, on its own"),
			end(1, killedBy(syscall.SIGKILL), ms(500), "later"),
		}, 0},
		{"everyone blames someone: earliest", []RankEnd{
			end(0, exitStatus(1), ms(3), "with rank 1"),
			end(1, exitStatus(1), ms(2), "with rank 0"),
		}, 1},
		{"ranks the launcher stopped are not candidates", []RankEnd{
			{Rank: 0, Status: killedBy(syscall.SIGTERM), Failed: true, Stopped: true, Ended: ms(0)},
			end(1, exitStatus(4), ms(1), "x"),
		}, 1},
	}
	for _, c := range cases {
		require.Equal(t, c.want, firstFailure(c.ranks), c.name)
	}
}

func TestExitCode(t *testing.T) {
	r := &Result{Ranks: []RankEnd{{Status: exitStatus(0)}, {Status: exitStatus(9), Failed: true}}, First: 1}
	require.Equal(t, 9, r.ExitCode())
	r.Ranks[1].Status = killedBy(syscall.SIGKILL)
	require.Equal(t, 137, r.ExitCode())
	r.TimedOut = true
	require.Equal(t, 124, r.ExitCode())
	r.Interrupted = syscall.SIGINT
	require.Equal(t, 130, r.ExitCode())
	ok := &Result{Ranks: []RankEnd{{}}, First: -1}
	require.Equal(t, 0, ok.ExitCode())
}
