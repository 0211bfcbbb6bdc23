package gocoll_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/gocoll/gocoll"
	"github.com/gocoll/gocoll/collective"
)

// exampleEnv is what Example's gocoll.Init reads: a world of one rank, as a
// program started by hand with GOCOLL_RANK=0 and GOCOLL_WORLD_SIZE=1 gets
// it (its own store on a free loopback port; GOCOLL_INSECURE=1: one host,
// no job key). Under gocoll run -np 4 the same body prints one line per
// rank and the sum 6.
var exampleEnv = map[string]string{
	"GOCOLL_RANK":       "0",
	"GOCOLL_WORLD_SIZE": "1",
	"GOCOLL_STORE":      "127.0.0.1:0",
	"GOCOLL_INSECURE":   "1",
}

// TestMain gives the package's tests and examples exampleEnv (a test that
// needs another environment sets it with t.Setenv, as TestLaunched does).
func TestMain(m *testing.M) {
	for k, v := range exampleEnv {
		if err := os.Setenv(k, v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// The README's "your own program" (examples/hello), word for word from its
// main; run here as a world of one rank.
func Example() {
	ctx := context.Background()
	world, err := gocoll.Init(ctx) // the job gocoll run, mpirun, srun or torchrun started
	if err != nil {
		log.Fatal(err) // one line: what is wrong, what to set
	}
	defer world.Close()
	x := []float32{float32(world.Rank())}
	if err := collective.AllReduce(ctx, world.Comm, x, x, collective.Sum); err != nil {
		log.Fatal(err) // names the failing rank
	}
	fmt.Printf("rank %d of %d: sum of ranks %v\n", world.Rank(), world.Size(), x[0])
	// Output: rank 0 of 1: sum of ranks 0
}

// Example's body (up to its Output comment) and the body of main in the
// README's first Go block are the same text, so neither drifts from the
// other (examples/hello's test holds the README to that program).
func TestExampleIsREADMEProgram(t *testing.T) {
	example := exampleBody(t)
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	program := readmeMain(t, string(readme))
	if example != program {
		t.Fatalf("Example's body in example_test.go and main's body in README.md differ:\nExample:\n%s\nREADME:\n%s", example, program)
	}
}

// exampleBody is the text of Example's body in this file, before its
// "// Output:" comment, trimmed.
func exampleBody(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "example_test.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "Example" || fn.Recv != nil {
			continue
		}
		body := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
		before, _, found := strings.Cut(body, "// Output:")
		if !found {
			t.Fatal("Example has no Output comment: go test would not run it")
		}
		return strings.TrimSpace(before)
	}
	t.Fatal("example_test.go has no func Example")
	return ""
}

// readmeMain is the body of func main in the first ```go block of readme,
// trimmed.
func readmeMain(t *testing.T, readme string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "```go\n")
	if !ok {
		t.Fatal("README.md has no ```go block")
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("README.md's first ```go block does not end")
	}
	_, body, ok := strings.Cut(block, "func main() {\n")
	if !ok {
		t.Fatal("README.md's first ```go block has no func main")
	}
	end := strings.LastIndex(body, "\n}")
	if end < 0 {
		t.Fatal("README.md's func main does not end")
	}
	return strings.TrimSpace(body[:end])
}
