package scripttest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRewriteRestoresGoldenFile damages every expected output of a copy of
// testdata/basic.txt, runs it in update mode, and checks that the copy is
// byte for byte the original again, and then passes without update.
func TestRewriteRestoresGoldenFile(t *testing.T) {
	orig, err := os.ReadFile("testdata/basic.txt")
	require.NoError(t, err)
	blocks, err := parseScript("basic.txt", splitLines(string(orig)))
	require.NoError(t, err)
	lines := splitLines(string(orig))

	// Replace each block's output with a wrong one; alternate between
	// plain, doubled and empty forms to exercise the conversions.
	var damaged strings.Builder
	copied := 0
	for i, b := range blocks {
		writeLines(&damaged, lines[copied:b.outStart])
		switch i % 3 {
		case 0:
			damaged.WriteString("stale output\n")
		case 1:
			damaged.WriteString("----\nstale\n\nblank\n----\n----\n")
		}
		copied = b.outEnd
	}
	writeLines(&damaged, lines[copied:])
	require.NotEqual(t, string(orig), damaged.String())

	file := filepath.Join(t.TempDir(), "basic.txt")
	require.NoError(t, os.WriteFile(file, []byte(damaged.String()), 0o644))

	res, err := execute(t, file, damaged.String(), handle)
	require.NoError(t, err)
	wantMismatches := 0
	for i, b := range blocks {
		if i%3 != 2 || b.want != "" {
			wantMismatches++
		}
	}
	require.Len(t, res.mismatches, wantMismatches)

	runFile(t, file, handle, true)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, string(orig), string(got))
	runFile(t, file, handle, false) // now passes
}

// TestRewriteKeepsBlocksApart: output that becomes plain must still end at
// a blank line when the next command follows right after the old doubled
// separators, or after an empty output.
func TestRewriteKeepsBlocksApart(t *testing.T) {
	src := "echo\nx\n----\n----\nold\n----\n----\nnone\n----\n----\nold\n----\n----\necho\nz\n----\n"
	res, err := execute(t, "f.txt", src, handle)
	require.NoError(t, err)
	require.Equal(t, "echo\nx\n----\nx\n\nnone\n----\n\necho\nz\n----\nz\n", res.rewritten)
	again, err := execute(t, "f.txt", res.rewritten, handle)
	require.NoError(t, err)
	require.Empty(t, again.mismatches)
	require.Equal(t, res.rewritten, again.rewritten)
}

func TestMismatchNamesFileLineAndDiff(t *testing.T) {
	src := "# comment\n\necho\na\nb\nc\n----\na\nB\nc\n"
	res, err := execute(t, "dir/x.txt", src, handle)
	require.NoError(t, err)
	require.Len(t, res.mismatches, 1)
	msg := res.mismatches[0].String()
	require.Equal(t, "dir/x.txt:3: output of \"echo\" differs (-want +got):\n  a\n- B\n+ b\n  c\n", msg)
}

func TestUnreadArgumentsAreReported(t *testing.T) {
	src := "typed n=1 sise=4KiB extra\n----\nn=1 d=1s s=1 f=0.5 ls=[] sz=[] on=false\n"
	res, err := execute(t, "x.txt", src, handle)
	require.NoError(t, err)
	require.Empty(t, res.mismatches)
	require.Equal(t, []string{"x.txt:1: typed: argument(s) not read by the handler (misspelled?): sise=4KiB extra"}, res.argErrors)
}

func TestFormatOutputRejectsDoubledSeparators(t *testing.T) {
	_, err := formatOutput("a\n----\n----\nb\n")
	require.Error(t, err)
	out, err := formatOutput("----\nb\n")
	require.NoError(t, err)
	require.Equal(t, "----\n----\nb\n----\n----\n", out)
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"echo\nno separator\n", `f.txt:1: command "echo" has no "----" line after it`},
		{"ok\n----\n\nbad x=(1,\n----\n", `f.txt:4: argument 1 of "bad": missing value at end of line`},
		{"bad x=(1\n----\n", `f.txt:1: argument 1 of "bad": list x=( is not closed`},
		{"bad x=\n----\n", `f.txt:1: argument 1 of "bad": missing value at end of line`},
		{"bad x=(1 2)\n----\n", `f.txt:1: argument 1 of "bad": unexpected '2' in list x`},
		{"bad x=\"open\n----\n", `f.txt:1: argument 1 of "bad": bad quoted string at column 7`},
		{"bad a)b\n----\n", `f.txt:1: argument 1 of "bad": unexpected ')' at column 6`},
		{"=x\n----\n", `f.txt:1: command line "=x" does not start with a name`},
		{"cmd\n----\n----\nout\n----\n", `f.txt:3: output opened with doubled separators is not closed by them`},
	} {
		_, err := parseScript("f.txt", splitLines(tc.src))
		require.EqualError(t, err, tc.want, "%q", tc.src)
		var pe *ParseError
		require.ErrorAs(t, err, &pe)
	}
}

func TestParseCommand(t *testing.T) {
	name, args, err := parseCommand("send  1->2\tsize=64KiB drop=(3, 7) q=\"x y\" l=(\"a,b\",c) e=()")
	require.NoError(t, err)
	require.Equal(t, "send", name)
	require.Equal(t, []Arg{
		{Key: "1->2"}, {Key: "size", Vals: []string{"64KiB"}}, {Key: "drop", Vals: []string{"3", "7"}},
		{Key: "q", Vals: []string{"x y"}}, {Key: "l", Vals: []string{"a,b", "c"}}, {Key: "e", Vals: []string{}},
	}, args)
	c := &Cmd{Name: name, Args: args}
	require.Equal(t, `send 1->2 size=64KiB drop=(3,7) q="x y" l=("a,b",c) e=()`, c.String())
}

func TestWalkRunsEveryScriptInOrder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("echo\nB\n----\nB\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("echo\nA\n----\nA\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "skip.md"), []byte("not a script"), 0o644))
	var seen []string
	Walk(t, dir, func(t *testing.T, c *Cmd) string {
		seen = append(seen, t.Name()+":"+c.Input)
		return c.Input
	})
	require.Equal(t, []string{"TestWalkRunsEveryScriptInOrder/a:A", "TestWalkRunsEveryScriptInOrder/b:B"}, seen)
}

func TestWalkFilesGivesEachScriptFreshState(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.txt", "b.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("count\n----\n1\n\ncount\n----\n2\n"), 0o644))
	}
	files := 0
	WalkFiles(t, dir, func(t *testing.T, file string) {
		files++
		n := 0 // per-script state
		RunFile(t, file, func(t *testing.T, c *Cmd) string {
			n++
			return strconv.Itoa(n)
		})
	})
	require.Equal(t, 2, files)
}
