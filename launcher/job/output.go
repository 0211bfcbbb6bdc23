package job

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
)

// Limits of output handling.
const (
	// maxLineBytes is the longest line copied as one; a longer line is
	// copied in pieces of this size, each prefixed.
	maxLineBytes = 64 << 10
	// maxTailLineBytes bounds each line kept for the failure report.
	maxTailLineBytes = 512
)

// lockedWriter serializes whole lines from many ranks onto one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) writeLine(prefix, line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	buf := make([]byte, 0, len(prefix)+len(line)+1)
	buf = append(append(append(buf, prefix...), line...), '\n')
	_, _ = l.w.Write(buf) // the launcher's own output failing must not stop the job
}

// writeText writes text, whole lines, at once: no rank's line comes
// between them.
func (l *lockedWriter) writeText(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, text)
}

// tail keeps the last lines of one rank's output, both streams in arrival
// order, each cut to maxTailLineBytes.
type tail struct {
	mu      sync.Mutex
	max     int
	lines   []string
	lastErr string // the last line on stderr, which most likely says why
}

func (t *tail) add(line []byte, stderr bool) {
	if len(line) > maxTailLineBytes {
		line = append(line[:maxTailLineBytes:maxTailLineBytes], "..."...)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == t.max {
		t.lines = t.lines[1:]
	}
	t.lines = append(t.lines, string(line))
	if stderr {
		t.lastErr = string(line)
	}
}

// summary is the line that best says how the rank ended: its last line on
// stderr, else its last line.
func (t *tail) summary() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lastErr != "" {
		return t.lastErr
	}
	if n := len(t.lines); n > 0 {
		return t.lines[n-1]
	}
	return ""
}

func (t *tail) get() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...)
}

// rankPrefix is what each line of rank's output starts with.
func rankPrefix(rank int) []byte { return []byte("[rank " + strconv.Itoa(rank) + "] ") }

// copyLines reads r to its end and writes each line to dst with prefix,
// and to tl (marked as stderr's if stderr). A line longer than
// maxLineBytes is written in pieces; a last line without a newline is
// written as a line. A line of stdout that is a JSON object (as gocoll
// bench --json prints) is written without prefix, so that a job's JSON
// stays machine-readable (gocoll run ... | jq).
func copyLines(r io.Reader, dst *lockedWriter, prefix []byte, tl *tail, stderr bool) {
	br := bufio.NewReaderSize(r, maxLineBytes)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			body := line
			if body[len(body)-1] == '\n' {
				body = body[:len(body)-1]
			}
			if !stderr && isJSONObject(body) {
				dst.writeLine(nil, body)
			} else {
				dst.writeLine(prefix, body)
			}
			tl.add(body, stderr)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// isJSONObject reports whether line is one JSON object, and nothing else
// but blanks around it.
func isJSONObject(line []byte) bool {
	trimmed := bytes.TrimSpace(line)
	return len(trimmed) >= 2 && trimmed[0] == '{' && trimmed[len(trimmed)-1] == '}' && json.Valid(trimmed)
}
