package reduce

import (
	"bytes"
	"os"
	"testing"

	"github.com/gocoll/gocoll/collective/reduce/internal/asmgen"
)

// TestGeneratedFilesAreCurrent regenerates the amd64 kernels in memory
// (the generator is plain Go and runs on any host) and fails if a
// committed file differs: after changing internal/asmgen, run
// `go generate ./collective/reduce/`.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := asmgen.Generate()
	if err != nil {
		t.Fatalf("asmgen: %v", err)
	}
	if len(files) != 3 {
		t.Fatalf("asmgen generated %d files, want 3", len(files))
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (run go generate ./collective/reduce/)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what internal/asmgen generates now: run go generate ./collective/reduce/", name)
		}
	}
}
