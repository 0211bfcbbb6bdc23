package scripttest

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeTB records the first Fatalf and ends the goroutine, as testing.T does.
type fakeTB struct {
	testing.TB
	msg string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// runFailing runs fn on its own goroutine with a fakeTB and returns it.
func runFailing(fn func(tb *fakeTB)) *fakeTB {
	tb := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(tb)
	}()
	<-done
	return tb
}

func mustCmd(t *testing.T, line string) *Cmd {
	t.Helper()
	name, args, err := parseCommand(line)
	require.NoError(t, err)
	return &Cmd{Name: name, Args: args, File: "s.txt", Line: 9}
}

func TestGettersFailWithPosition(t *testing.T) {
	for _, tc := range []struct {
		line string
		get  func(c *Cmd, tb *fakeTB)
		want string
	}{
		{"c n=x", func(c *Cmd, tb *fakeTB) { c.Int(tb, "n") }, `s.txt:9: c: argument n: "x" is not an integer`},
		{"c", func(c *Cmd, tb *fakeTB) { c.Int(tb, "n") }, `s.txt:9: c: missing argument n=`},
		{"c n", func(c *Cmd, tb *fakeTB) { c.Int(tb, "n") }, `s.txt:9: c: argument n needs a value (n=...)`},
		{"c n=(1,2)", func(c *Cmd, tb *fakeTB) { c.Int(tb, "n") }, `s.txt:9: c: argument n: want one value, got 2`},
		{"c d=3", func(c *Cmd, tb *fakeTB) { c.Duration(tb, "d") }, `s.txt:9: c: argument d: "3" is not a duration like 3ms or 200us`},
		{"c s=4MB/s", func(c *Cmd, tb *fakeTB) { c.Size(tb, "s") }, `s.txt:9: c: argument s: "4MB/s" is not a size like 1500, 64KiB, 4MiB or 1G`},
		{"c l=(1,x)", func(c *Cmd, tb *fakeTB) { c.Ints(tb, "l") }, `s.txt:9: c: argument l, item 2: "x" is not an integer`},
		{"c b=maybe", func(c *Cmd, tb *fakeTB) { c.Bool(tb, "b") }, `s.txt:9: c: argument b: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{"c", func(c *Cmd, tb *fakeTB) { c.Value(tb, "v") }, `s.txt:9: c: missing argument v=`},
		{"c f=NaN", func(c *Cmd, tb *fakeTB) { c.Float(tb, "f") }, `s.txt:9: c: argument f: "NaN" is not a finite number`},
	} {
		c := mustCmd(t, tc.line)
		tb := runFailing(func(tb *fakeTB) { tc.get(c, tb) })
		require.Equal(t, tc.want, tb.msg, tc.line)
	}
}

func TestGetters(t *testing.T) {
	c := mustCmd(t, `c a 1->2 v=x n=3 d=200us s=1.5KiB f=2.5 l=(a,"b c") ds=(1ms,2s) b=false a2`)
	require.Equal(t, []string{"a", "1->2", "a2"}, c.Positional())
	require.Equal(t, "x", c.Value(t, "v"))
	require.Equal(t, "def", c.ValueOr(t, "missing", "def"))
	require.Equal(t, 3, c.Int(t, "n"))
	require.Equal(t, 200*time.Microsecond, c.Duration(t, "d"))
	require.Equal(t, int64(1536), c.Size(t, "s"))
	require.Equal(t, 2.5, c.Float(t, "f"))
	require.Equal(t, []string{"a", "b c"}, c.Strings(t, "l"))
	require.Equal(t, []time.Duration{time.Millisecond, 2 * time.Second}, c.Durations(t, "ds"))
	require.False(t, c.BoolOr(t, "b", true))
	require.True(t, c.Has("a"))
	require.False(t, c.Has("zzz"))
	require.Empty(t, c.Unread())
	require.Equal(t, "s.txt:9", c.Pos())

	c = mustCmd(t, "c n=1 n=2 x")
	require.Equal(t, 2, c.Int(t, "n"), "the last of repeated keys wins")
	require.Equal(t, []Arg{{Key: "x"}}, c.Unread())
	in := &Cmd{Input: "a\n\nb"}
	require.Equal(t, []string{"a", "", "b"}, in.InputLines())
	require.Nil(t, (&Cmd{}).InputLines())
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{
		"0": 0, "1500": 1500, "1500B": 1500, "64KiB": 64 << 10, "4MiB": 4 << 20, "1GiB": 1 << 30,
		"2TiB": 2 << 40, "1K": 1000, "1KB": 1000, "1G": 1e9, "3GB": 3e9, "1T": 1e12, "1.5KiB": 1536,
		"0.5MiB": 512 << 10, "2.25K": 2250, "1.000B": 1, "8388607TiB": 8388607 << 40,
	} {
		got, err := ParseSize(s)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "B", "-1", "1.5", "1.", ".5K", "1.1B", "1e3", "4 MiB", "4mib",
		"0x10", "8388608TiB", "9223372036854775808", "1.0000000000000000001KiB", "1,5K"} {
		_, err := ParseSize(s)
		require.Error(t, err, s)
	}
}

func TestParseNumbers(t *testing.T) {
	n, err := ParseInt("-1_000")
	require.NoError(t, err)
	require.Equal(t, -1000, n)
	n, err = ParseInt("010")
	require.NoError(t, err)
	require.Equal(t, 10, n, "leading zeros are decimal")
	for _, s := range []string{"", "1.0", "_1", "1_", "1__0", "0x10", "99999999999999999999"} {
		_, err := ParseInt(s)
		require.Error(t, err, s)
	}
	f, err := ParseFloat("12.5%")
	require.NoError(t, err)
	require.Equal(t, 0.125, f)
	for _, s := range []string{"", "%", "x", "Inf", "1e999"} {
		_, err := ParseFloat(s)
		require.Error(t, err, s)
	}
	d, err := ParseDuration("0")
	require.NoError(t, err)
	require.Zero(t, d)
}

func TestLineDiff(t *testing.T) {
	require.Equal(t, "  a\n- b\n+ x\n+ y\n  c\n", lineDiff("a\nb\nc\n", "a\nx\ny\nc\n"))
	require.Equal(t, "+ new\n", lineDiff("", "new\n"))
	require.Equal(t, "- old\n", lineDiff("old\n", ""))
}
