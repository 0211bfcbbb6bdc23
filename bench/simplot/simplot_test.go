package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const sample = `# gocoll sim: AllReduce on 8 ranks (2 sites, 4 hosts), chunk 524288 B
# host 2µs one way, 4 GB/s per transfer, 1 lane(s)
  size           algorithm  mode       time  algbw GB/s  busbw GB/s  predicted  sim/model  wall
     8  recursive-doubling  data    2.029ms      0.0000      0.0000    2.027ms      1.001   1ms
     8                ring  data   10.089ms      0.0000      0.0000    7.102ms      1.421   8ms
    4M        hierarchical  free/128   47.539ms      0.0882      0.1544   50.401ms      0.943   41ms
    4M                ring  free/128   77.821ms      0.0539      0.0943   80.502ms      0.967   36ms
    4M  recursive-doubling  free/128  177.535ms      0.0236      0.0413  177.559ms      1.000   51ms
    4M                tree  free/128   95.769ms      0.0438      0.0766   118.15ms      0.811   33ms
`

func TestTables(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw.txt")
	if err := os.WriteFile(raw, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if r.ranks != "8" || len(r.rows) != 6 || r.rows[2].sim != 47539*time.Microsecond || r.rows[2].size != 4<<20 || r.rows[2].mode != "free/128" {
		t.Fatalf("parsed %+v", r)
	}
	md, png := filepath.Join(dir, "t.md"), filepath.Join(dir, "p.png")
	if err := mainErr(md, png, []string{raw}, []string{raw}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	for _, want := range []string{
		"| 8 | ring | data | 10.089ms | 7.102ms | 1.421 | **no** |",
		"Farthest from the model: sim/model 1.421.",
		"| 8 | 2.029ms (2.027ms) | 10.089ms (7.102ms) | - | - | - | recursive-doubling | recursive-doubling | 1.000 |",
		"| 4M | 177.535ms (177.559ms) | 77.821ms (80.502ms) | 47.539ms (50.401ms) | 95.769ms (118.15ms) | 1.23 | hierarchical | hierarchical | 1.000 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 {
		t.Errorf("no PNG: %v", err)
	}
	if err := os.WriteFile(raw, []byte("nothing here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := parse(raw); err == nil {
		t.Error("a file without a table: no error")
	}
}
