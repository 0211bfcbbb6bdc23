// Command run writes the files neongen generates into a directory (default
// the current one, package reduce when run by go generate).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gocoll/gocoll/collective/reduce/internal/neongen"
)

func main() {
	dir := flag.String("out", ".", "directory to write the generated files to")
	flag.Parse()
	files, err := neongen.Generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "neongen:", err)
		os.Exit(1)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(*dir, name), data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "neongen:", err)
			os.Exit(1)
		}
	}
}
