package metaroce

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCoreIsPure enforces the project's first rule for the core and its
// wire package: no networking, no OS, no goroutines and no clock. The test
// files may use anything.
func TestCoreIsPure(t *testing.T) {
	banned := map[string]bool{"net": true, "os": true, "syscall": true, "net/netip": true, "os/exec": true, "unsafe": true, "sync": true}
	clock := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
		"AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true}
	for _, dir := range []string{".", "wire"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files)
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			require.NoError(t, err)
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				require.False(t, banned[p] || strings.HasPrefix(p, "net/"), "%s imports %s", name, p)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.GoStmt:
					t.Errorf("%s starts a goroutine", name)
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok && id.Name == "time" && clock[n.Sel.Name] {
						t.Errorf("%s calls time.%s", name, n.Sel.Name)
					}
				}
				return true
			})
		}
	}
}
