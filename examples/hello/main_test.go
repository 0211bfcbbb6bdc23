package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gocoll/gocoll/launcher/job"
	"github.com/stretchr/testify/require"
)

// The program compiles, and 3 ranks of it started as gocoll run starts
// them (launcher/job) all print the sum 0+1+2.
func TestHelloRuns(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hello")
	build := exec.Command("go", "build", "-o", bin, ".") // go test puts its go first in PATH
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	res, err := job.Run(ctx, job.Spec{Program: bin, NP: 3, Environ: os.Environ(), Stdout: &stdout, Stderr: &stderr})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode(), "stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
	for r := range 3 {
		require.Contains(t, stdout.String(), fmt.Sprintf("[rank %d] rank %d of 3: sum of ranks 3\n", r, r))
	}
}

// The README's "your own program" is this program's main, word for word,
// so the README's code is the code this test builds and runs.
func TestREADMEShowsThisProgram(t *testing.T) {
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	start := bytes.Index(src, []byte("import ("))
	require.GreaterOrEqual(t, start, 0)
	body := strings.TrimSpace(string(src[start:]))
	require.Contains(t, string(readme), body, "README.md must show examples/hello/main.go from its imports on")
}
