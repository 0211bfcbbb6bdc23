// Command run writes the files asmgen generates into a directory (default
// the current one, package reduce when run by go generate).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gocoll/gocoll/collective/reduce/internal/asmgen"
)

func main() {
	// avo's build package registers its own flags on flag.CommandLine.
	fs := flag.NewFlagSet("asmgen", flag.ExitOnError)
	dir := fs.String("out", ".", "directory to write the generated files to")
	_ = fs.Parse(os.Args[1:])
	files, err := asmgen.Generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "asmgen:", err)
		os.Exit(1)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(*dir, name), data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "asmgen:", err)
			os.Exit(1)
		}
	}
}
