package reduce

import (
	"bytes"
	"os"
	"testing"

	"github.com/gocoll/gocoll/collective/reduce/internal/neongen"
)

// TestNEONFilesAreCurrent regenerates the arm64 kernels in memory (on any
// host) and fails if a committed file differs: after changing
// internal/neongen, run `go generate ./collective/reduce/` (on arm64, or
// `go run ./internal/neongen/run` in collective/reduce elsewhere).
func TestNEONFilesAreCurrent(t *testing.T) {
	files, err := neongen.Generate()
	if err != nil {
		t.Fatalf("neongen: %v", err)
	}
	if len(files) != 2 {
		t.Fatalf("neongen generated %d files, want 2", len(files))
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (run go run ./internal/neongen/run in collective/reduce)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what internal/neongen generates now: run go run ./internal/neongen/run in collective/reduce", name)
		}
	}
}
