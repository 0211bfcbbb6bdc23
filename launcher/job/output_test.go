package job

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCopyLines(t *testing.T) {
	long := strings.Repeat("x", maxLineBytes+10)
	in := "one\n\ntwo\r\n" + long + "\nlast without newline"
	var out bytes.Buffer
	tl := &tail{max: 3}
	copyLines(strings.NewReader(in), &lockedWriter{w: &out}, rankPrefix(12), tl, false)
	want := "[rank 12] one\n[rank 12] \n[rank 12] two\r\n[rank 12] " + long[:maxLineBytes] + "\n[rank 12] " +
		long[maxLineBytes:] + "\n[rank 12] last without newline\n"
	require.Equal(t, want, out.String())
	got := tl.get()
	require.Len(t, got, 3)
	require.Equal(t, strings.Repeat("x", maxTailLineBytes)+"...", got[0])
	require.Equal(t, "xxxxxxxxxx", got[1])
	require.Equal(t, "last without newline", got[2])
	require.Equal(t, "last without newline", tl.summary())
	copyLines(strings.NewReader("why\n"), &lockedWriter{w: &out}, nil, tl, true)
	copyLines(strings.NewReader("later on stdout\n"), &lockedWriter{w: &out}, nil, tl, false)
	require.Equal(t, "why", tl.summary())
}

// JSON objects on stdout go without the prefix; text, JSON-looking text
// and stderr keep it.
func TestCopyLinesJSONUnprefixed(t *testing.T) {
	in := `{"size": 8, "busbw": 1.5}` + "\n" + "  {}  \n" + `{"not": json}` + "\n" + `["a list"]` + "\n" + "text\n"
	var out bytes.Buffer
	copyLines(strings.NewReader(in), &lockedWriter{w: &out}, rankPrefix(3), &tail{max: 1}, false)
	require.Equal(t, `{"size": 8, "busbw": 1.5}`+"\n  {}  \n"+`[rank 3] {"not": json}`+"\n"+`[rank 3] ["a list"]`+"\n[rank 3] text\n", out.String())
	out.Reset()
	copyLines(strings.NewReader("{}\n"), &lockedWriter{w: &out}, rankPrefix(3), &tail{max: 1}, true)
	require.Equal(t, "[rank 3] {}\n", out.String())
}
