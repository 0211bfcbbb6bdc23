package scripttest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// UpdateFlag is the name of the command-line flag that makes RunFile
// rewrite expected outputs instead of comparing them: go test -update.
const UpdateFlag = "update"

func init() {
	// Another package in the same test binary may have registered the same
	// flag; share it rather than panic.
	if flag.Lookup(UpdateFlag) == nil {
		flag.Bool(UpdateFlag, false, "rewrite the expected outputs of scripttest scripts")
	}
}

// updating reports whether -update is set.
func updating() bool {
	f := flag.Lookup(UpdateFlag)
	return f != nil && f.Value.String() == "true"
}

// Handler runs one command and returns its output. It may fail the test
// through t; it is called for the blocks of a script in order, on the
// script's own subtest.
type Handler func(t *testing.T, cmd *Cmd) string

// Walk runs every *.txt script in dir, in name order, each as a subtest
// named after the file, with the same handler. It fails the test if there
// is none.
func Walk(t *testing.T, dir string, h Handler) {
	t.Helper()
	WalkFiles(t, dir, func(t *testing.T, file string) { RunFile(t, file, h) })
}

// WalkFiles calls run for every *.txt script in dir, in name order, each on
// a subtest named after the file. Use it when each script needs fresh
// state: run builds it and calls RunFile with a handler bound to it. It
// fails the test if there is no script.
func WalkFiles(t *testing.T, dir string, run func(t *testing.T, file string)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		t.Fatalf("scripttest: %v", err)
	}
	if len(files) == 0 {
		t.Fatalf("scripttest: no *.txt scripts in %s", dir)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) { run(t, file) })
	}
}

// RunFile runs the script in file, passing each block's command to h and
// comparing h's output with the expected one. Each mismatch fails the test
// with a diff naming file:line; with -update, the file is rewritten with the
// actual outputs instead.
func RunFile(t *testing.T, file string, h Handler) {
	t.Helper()
	runFile(t, file, h, updating())
}

func runFile(t *testing.T, file string, h Handler, update bool) {
	t.Helper()
	src, err := readScript(file)
	if err != nil {
		t.Fatalf("scripttest: %v", err)
	}
	res, err := execute(t, file, src, h)
	if err != nil {
		t.Fatalf("scripttest: %v", err)
	}
	for _, msg := range res.argErrors {
		t.Error(msg)
	}
	if !update {
		for _, m := range res.mismatches {
			t.Error(m.String())
		}
		return
	}
	if res.rewritten == src {
		return
	}
	if err := os.WriteFile(file, []byte(res.rewritten), 0o644); err != nil {
		t.Fatalf("scripttest: %v", err)
	}
	t.Logf("scripttest: rewrote %s (%d outputs changed)", file, len(res.mismatches))
}

func readScript(file string) (string, error) {
	info, err := os.Stat(file)
	if err != nil {
		return "", err
	}
	if info.Size() > MaxScriptBytes {
		return "", fmt.Errorf("%s: %d bytes, more than MaxScriptBytes=%d", file, info.Size(), MaxScriptBytes)
	}
	b, err := os.ReadFile(file)
	return string(b), err
}

// result is what running a script produced.
type result struct {
	mismatches []mismatch
	argErrors  []string // commands whose handler left arguments unread
	rewritten  string   // the script with every output replaced by the actual one
}

// mismatch is one block whose output differs from the expected one.
type mismatch struct {
	cmd       *Cmd
	want, got string
}

func (m mismatch) String() string {
	return fmt.Sprintf("%s: output of %q differs (-want +got):\n%s", m.cmd.Pos(), m.cmd.String(), lineDiff(m.want, m.got))
}

// execute runs every block of the script src through h.
func execute(t *testing.T, file, src string, h Handler) (result, error) {
	t.Helper()
	lines := splitLines(src)
	blocks, err := parseScript(file, lines)
	if err != nil {
		return result{}, err
	}
	var res result
	var out strings.Builder
	copied := 0 // lines[:copied] are already in out
	for _, b := range blocks {
		got := normalizeOutput(h(t, b.cmd))
		if unread := b.cmd.Unread(); len(unread) > 0 {
			res.argErrors = append(res.argErrors, unreadMessage(b.cmd, unread))
		}
		if got != b.want {
			res.mismatches = append(res.mismatches, mismatch{cmd: b.cmd, want: b.want, got: got})
		}
		formatted, err := formatOutput(got)
		if err != nil {
			return result{}, fmt.Errorf("%s: %w", b.cmd.Pos(), err)
		}
		writeLines(&out, lines[copied:b.outStart])
		out.WriteString(formatted)
		if !strings.HasPrefix(formatted, separator) && b.outEnd < len(lines) && lines[b.outEnd] != "" {
			out.WriteByte('\n') // plain output must end at a blank line
		}
		copied = b.outEnd
	}
	writeLines(&out, lines[copied:])
	res.rewritten = out.String()
	return res, nil
}

func unreadMessage(c *Cmd, unread []Arg) string {
	names := make([]string, len(unread))
	for i, a := range unread {
		names[i] = a.String()
	}
	return fmt.Sprintf("%s: %s: argument(s) not read by the handler (misspelled?): %s", c.Pos(), c.Name, strings.Join(names, " "))
}

func writeLines(b *strings.Builder, lines []string) {
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
}

// normalizeOutput makes lines end in "\n" rather than "\r\n", as when a
// script is read, and non-empty output end in exactly one newline.
func normalizeOutput(s string) string {
	lines := splitLines(strings.TrimRight(s, "\n"))
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// formatOutput renders normalized output as it is stored after the first
// separator: plainly, or between doubled separators if it has blank lines
// or starts with a separator line.
func formatOutput(out string) (string, error) {
	lines := splitLines(out)
	doubled := len(lines) > 0 && lines[0] == separator
	for i, l := range lines {
		if l == "" {
			doubled = true
		}
		if l == separator && i+1 < len(lines) && lines[i+1] == separator {
			return "", fmt.Errorf("output contains two %q lines in a row and cannot be stored", separator)
		}
	}
	if !doubled {
		return out, nil
	}
	return separator + "\n" + out + separator + "\n" + separator + "\n", nil
}
