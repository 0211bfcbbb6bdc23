package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck32 checks that an int constant above 2^31-1 in a test file is
// reported for 386 and not for amd64.
func TestCheck32(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	write("m.go", "package m\n\nconst Big = 1 << 32\n")
	write("m_test.go", "package m\n\nimport \"testing\"\n\nfunc TestM(t *testing.T) { n := Big; t.Log(n) }\n")
	for _, tc := range []struct {
		arch string
		want int
	}{{"386", 1}, {"amd64", 0}} {
		t.Setenv("GOARCH", tc.arch)
		var out strings.Builder
		n, err := check(&out, dir, []string{"./..."})
		if err != nil {
			t.Fatalf("%s: %v", tc.arch, err)
		}
		if n != tc.want || (n > 0) != strings.Contains(out.String(), "m_test.go:5:") {
			t.Errorf("%s: %d errors, want %d:\n%s", tc.arch, n, tc.want, out.String())
		}
	}
}
