//go:build unix

package job

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/topology"
)

// syncBuffer is a bytes.Buffer safe for the output copiers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// shSpec runs script with sh on np local ranks, with fast stop timers.
func shSpec(np int, script string, args ...string) (Spec, *syncBuffer, *syncBuffer) {
	out, errOut := &syncBuffer{}, &syncBuffer{}
	return Spec{
		Program: "/bin/sh", Args: append([]string{"-c", script, "sh"}, args...), NP: np,
		LocalNames: []string{"thishost"}, Environ: []string{"PATH=/usr/bin:/bin", "KEEP=kept"},
		Stdout: out, Stderr: errOut, Grace: 300 * time.Millisecond, KillAfter: 500 * time.Millisecond,
		JobID: "testjob",
	}, out, errOut
}

// afterTrap is a script for shSpec, given a fresh directory as its first
// argument, in which rank 0 runs first once rank 1 ignores SIGTERM (or
// after 10 s), and rank 1 runs rest: so the stop that rank 0's end starts
// never finds rank 1 before its trap, however late a loaded machine runs it.
func afterTrap(first, rest string) string {
	return `if [ "$GOCOLL_RANK" = 0 ]; then i=0; while [ ! -e "$1/trapped" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; ` +
		first + `; fi; trap "" TERM; : >"$1/trapped"; ` + rest
}

func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	sort.Strings(lines)
	return lines
}

func TestRunLocalPrefixedOutput(t *testing.T) {
	s, out, errOut := shSpec(3, `echo "out $GOCOLL_RANK/$GOCOLL_WORLD_SIZE local=$GOCOLL_LOCAL_RANK host=$GOCOLL_HOST site=$GOCOLL_SITE serve=$GOCOLL_STORE_SERVE keep=$KEEP x=$X watch=$GOCOLL_WATCH_STDIN"
echo "err $GOCOLL_RANK" >&2
printf 'no newline %s' "$GOCOLL_RANK"`)
	s.Export = []string{"X=exported"}
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode())
	require.Equal(t, -1, res.First)
	var b strings.Builder
	res.Report(&b)
	require.Empty(t, b.String())
	require.Equal(t, []string{
		"[rank 0] no newline 0",
		"[rank 0] out 0/3 local=0 host=thishost site=default serve=0 keep=kept x=exported watch=",
		"[rank 1] no newline 1",
		"[rank 1] out 1/3 local=1 host=thishost site=default serve=0 keep=kept x=exported watch=",
		"[rank 2] no newline 2",
		"[rank 2] out 2/3 local=2 host=thishost site=default serve=0 keep=kept x=exported watch=",
	}, sortedLines(out.String()))
	require.Equal(t, []string{"[rank 0] err 0", "[rank 1] err 1", "[rank 2] err 2"}, sortedLines(errOut.String()))
}

// The local store is served by the launcher: ranks get its loopback
// address and the job key.
func TestRunLocalStoreAddress(t *testing.T) {
	s, out, _ := shSpec(1, `echo "$GOCOLL_STORE ${#GOCOLL_JOB_KEY} $GOCOLL_JOB_ID"`)
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode())
	fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(out.String()), "[rank 0] "))
	require.Len(t, fields, 3)
	require.True(t, strings.HasPrefix(fields[0], "127.0.0.1:"), fields[0])
	require.Equal(t, "64", fields[1]) // jobkey.GeneratedLen
	require.Equal(t, "testjob", fields[2])
}

func TestRunFailureStopsOthers(t *testing.T) {
	s, _, _ := shSpec(4, `if [ "$GOCOLL_RANK" = 1 ]; then echo "rank one gives up" >&2; exit 7; fi; echo waiting; exec sleep 60`)
	start := time.Now()
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Less(t, time.Since(start), 10*time.Second)
	require.Equal(t, 7, res.ExitCode())
	require.Equal(t, 1, res.First)
	for _, r := range []int{0, 2, 3} {
		e := res.Ranks[r]
		require.True(t, e.Stopped, "rank %d", r)
		require.Equal(t, syscall.SIGTERM, e.Status.Signal(), "rank %d", r)
	}
	var b strings.Builder
	res.Report(&b)
	report := b.String()
	require.Contains(t, report, "gocoll run: rank 1 on host thishost failed: exit status 7: rank one gives up\n")
	require.NotContains(t, report, "    rank one gives up\n", "its one line is not repeated")
	require.Contains(t, report, "gocoll run: stopped: rank 0 on thishost (killed by signal 15 (terminated))")
}

// A rank that ignores SIGTERM is killed KillAfter later.
func TestRunKillsWhatIgnoresTerm(t *testing.T) {
	s, _, _ := shSpec(2, afterTrap(`exit 3`, `sleep 60; echo survived`), t.TempDir())
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 3, res.ExitCode())
	require.Equal(t, syscall.SIGKILL, res.Ranks[1].Status.Signal())
	require.NotContains(t, strings.Join(res.Ranks[1].Tail, "\n"), "survived")
}

func TestRunKilledRankStatus(t *testing.T) {
	s, _, _ := shSpec(2, `if [ "$GOCOLL_RANK" = 1 ]; then echo bye; kill -9 $$; fi; exec sleep 60`)
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 128+9, res.ExitCode())
	var b strings.Builder
	res.Report(&b)
	require.Contains(t, b.String(), "rank 1 on host thishost failed: killed by signal 9 (killed): bye")
}

func TestRunTimeout(t *testing.T) {
	s, _, _ := shSpec(2, `exec sleep 60`)
	s.Timeout = 300 * time.Millisecond
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.True(t, res.TimedOut)
	require.Equal(t, 124, res.ExitCode())
	var b strings.Builder
	res.Report(&b)
	require.Contains(t, b.String(), "gocoll run: job timed out after")
	require.Contains(t, b.String(), "stopped ranks rank 0 on thishost (killed by signal 15 (terminated))")
}

func TestRunForwardsSignals(t *testing.T) {
	s, out, _ := shSpec(2, `trap 'echo got usr2' USR2; trap 'echo got int; exit 5' INT; echo ready; while :; do sleep 0.05; done`)
	sigs := make(chan os.Signal, 2)
	s.Signals = sigs
	go func() {
		for strings.Count(out.String(), "ready") < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		sigs <- syscall.SIGUSR2
		for strings.Count(out.String(), "got usr2") < 2 {
			time.Sleep(10 * time.Millisecond)
		}
		sigs <- syscall.SIGINT
	}()
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 130, res.ExitCode())
	require.Equal(t, syscall.SIGINT, res.Interrupted)
	require.Equal(t, 2, strings.Count(out.String(), "got int"), out.String())
	for _, e := range res.Ranks {
		require.Equal(t, 5, e.Status.ExitStatus())
		require.True(t, e.Stopped)
	}
	require.Equal(t, -1, res.First)
	var b strings.Builder
	res.Report(&b)
	require.Regexp(t, `^gocoll run: stopped by signal 2 \(interrupt\) after \S+\n$`, b.String())
}

// Remote ranks go through the rsh command with their variables on its
// command line but for the job key, which is the first line of their
// stdin; stdin EOF tells them to stop.
func TestRunRemoteThroughRsh(t *testing.T) {
	s, out, _ := shSpec(0, afterTrap(`echo "on $RSH_HOST"; exit 4`, `read -r k; echo "on $RSH_HOST watch=$GOCOLL_WATCH_STDIN addr=$GOCOLL_ADDR key=${#k} stdin=$GOCOLL_JOB_KEY_STDIN"; cat; echo stdin closed`), t.TempDir())
	s.Hosts = []topology.HostSlots{{Host: "ra", Site: "s1", Slots: 1}, {Host: "rb", Site: "s2", Addr: "10.9.0.2", Slots: 1}}
	s.Rsh = "env RSH_HOST={host}"
	s.Store = StoreLauncher
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 4, res.ExitCode())
	require.True(t, res.Ranks[1].Remote)
	require.Equal(t, 0, res.Ranks[1].Status.ExitStatus())
	require.Equal(t, []string{"[rank 0] on ra", "[rank 1] on rb watch=1 addr=10.9.0.2 key=64 stdin=1", "[rank 1] stdin closed"}, sortedLines(out.String()))
}

// With ssh-like commands, which give their arguments to a remote shell,
// every word is quoted so that it arrives intact.
func TestRunRemoteShellQuoting(t *testing.T) {
	dir := t.TempDir()
	fakeSSH := filepath.Join(dir, "ssh")
	// Like ssh: drop the options and the host, run the rest in a shell.
	require.NoError(t, os.WriteFile(fakeSSH, []byte("#!/bin/sh\nshift 3\nexec /bin/sh -c \"$*\"\n"), 0o755))
	s, out, _ := shSpec(1, `printf '<%s>' "$@"; echo " $GOCOLL_SITE"`, "it's", "two  spaces", `$HOME;"`, "")
	s.Hosts = []topology.HostSlots{{Host: "127.0.0.2", Site: "far", Slots: 1}}
	s.Rsh = fakeSSH + " -o BatchMode=yes {host}"
	s.Store = StoreLauncher
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode(), out.String())
	require.Equal(t, "[rank 0] <it's><two  spaces><$HOME;\"><> far\n", out.String())
}

func TestRunOutputDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	s, out, _ := shSpec(2, `echo "to stdout $GOCOLL_RANK"; echo "to stderr" >&2`)
	s.OutputDir = dir
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode())
	require.Empty(t, out.String())
	b, err := os.ReadFile(filepath.Join(dir, "rank.1.stdout"))
	require.NoError(t, err)
	require.Equal(t, "to stdout 1\n", string(b))
	b, err = os.ReadFile(filepath.Join(dir, "rank.0.stderr"))
	require.NoError(t, err)
	require.Equal(t, "to stderr\n", string(b))
	require.Equal(t, []string{"to stderr", "to stdout 0"}, sortTail(res.Ranks[0].Tail))
}

func sortTail(lines []string) []string {
	out := append([]string(nil), lines...)
	sort.Strings(out)
	return out
}

func TestRunBadInput(t *testing.T) {
	twoSlots := []topology.HostSlots{{Host: "localhost", Slots: 2}}
	cases := []struct {
		want string
		edit func(*Spec)
	}{
		{"no program to run", func(s *Spec) { s.Program = "" }},
		{"-np 0: want at least 1 rank", func(s *Spec) { s.NP = 0 }},
		{"-np -2: want at least 1 rank", func(s *Spec) { s.NP = -2 }},
		{"-np 3 but the hosts have 2 slots", func(s *Spec) { s.NP, s.Hosts = 3, twoSlots }},
		{`program "/no/such/prog": no such file or directory`, func(s *Spec) { s.Program = "/no/such/prog" }},
		{`program "no-such-prog-gocoll": executable file not found in $PATH`, func(s *Spec) { s.Program = "no-such-prog-gocoll" }},
		{`host "no-such-host.invalid": unknown`, func(s *Spec) { s.Hosts = []topology.HostSlots{{Host: "no-such-host.invalid", Slots: 1}} }},
		{`--rsh "ssh 'x": unterminated '`, func(s *Spec) { s.Rsh, s.Hosts = "ssh 'x", []topology.HostSlots{{Host: "h", Slots: 1}} }},
		{`-x "1X": "1X" is not a variable name`, func(s *Spec) { s.Export = []string{"1X"} }},
		{"-x UNSET_VAR: not set in the launcher's environment", func(s *Spec) { s.Export = []string{"UNSET_VAR"} }},
		{`--store "nfs": want auto`, func(s *Spec) { s.Store = "nfs" }},
		{"rank 0 runs on localhost, which the remote ranks cannot reach", func(s *Spec) {
			s.NP, s.Rsh = 2, "env"
			s.Hosts = []topology.HostSlots{{Host: "localhost", Slots: 1}, {Host: "far", Slots: 1}}
		}},
		{`host "bad host" has the character ' '`, func(s *Spec) { s.Hosts = []topology.HostSlots{{Host: "bad host", Slots: 1}} }},
	}
	for _, c := range cases {
		s, out, errOut := shSpec(1, "echo should not run")
		c.edit(&s)
		res, err := Run(context.Background(), s)
		require.Nil(t, res, c.want)
		require.Error(t, err, c.want)
		require.Contains(t, err.Error(), c.want)
		require.NotContains(t, err.Error(), "\n")
		require.Empty(t, out.String()+errOut.String())
	}
}

// Untagged: no prefix on either stream.
func TestRunUntagged(t *testing.T) {
	s, out, errOut := shSpec(2, `echo "out $GOCOLL_RANK"; echo "err $GOCOLL_RANK" >&2`)
	s.Untagged = true
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode())
	require.Equal(t, []string{"out 0", "out 1"}, sortedLines(out.String()))
	require.Equal(t, []string{"err 0", "err 1"}, sortedLines(errOut.String()))
}

// A job larger than MaxRanks, or than the launcher's RLIMIT_NOFILE allows,
// is refused before any rank starts.
func TestRunSizeLimits(t *testing.T) {
	dir := t.TempDir()
	s, _, _ := shSpec(MaxRanks+1, `: >"$1/started.$GOCOLL_RANK"`, dir)
	_, err := Run(context.Background(), s)
	require.EqualError(t, err, "-np 65537: at most 65536 ranks in a job")

	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	low := lim
	low.Cur = 256
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low))
	defer func() { require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)) }()
	s.NP = 100
	_, err = Run(context.Background(), s)
	require.EqualError(t, err, "-np 100: this launcher may open 256 files (RLIMIT_NOFILE), enough for 32 ranks at 6 files each; raise the limit (ulimit -n) or use fewer ranks")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "a rank started")
}

// A bad GOCOLL_* value, in the launcher's environment or exported, is one
// error from Run, before any rank starts.
func TestRunChecksRankEnvironment(t *testing.T) {
	for _, c := range []struct {
		environ, export []string
		want            string
	}{
		{[]string{"GOCOLL_TRANSPORT=ib"}, nil, `gocoll: GOCOLL_TRANSPORT="ib": want tcp, metaroce, shm, auto`},
		{nil, []string{"GOCOLL_DEBUG=loud"}, `gocoll: GOCOLL_DEBUG="loud": want info, debug or trace`},
		{[]string{"GOCOLL_PEER_TIMEOUT=soon"}, nil, `gocoll: GOCOLL_PEER_TIMEOUT="soon" is not a duration`},
	} {
		dir := t.TempDir()
		s, _, _ := shSpec(3, `: >"$1/started.$GOCOLL_RANK"`, dir)
		s.Environ = append(s.Environ, c.environ...)
		s.Export = c.export
		_, err := Run(context.Background(), s)
		require.ErrorContains(t, err, c.want)
		require.NotContains(t, err.Error(), "\n")
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Empty(t, entries, "a rank started")
	}
	s, _, _ := shSpec(2, `exit 0`)
	s.Environ = append(s.Environ, "GOCOLL_TRANSPORT=tcp", "GOCOLL_DEBUG=info")
	res, err := Run(context.Background(), s)
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode())
}
