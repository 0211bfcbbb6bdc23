package topology

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Only detect.go asks the machine (cpuid, net, runtime); only detect.go and
// Load in json.go touch os. The rest of the package stays pure.
func TestImportsStayInDetect(t *testing.T) {
	allowed := map[string][]string{
		"github.com/klauspost/cpuid/v2": {"detect.go"},
		"net":                           {"detect.go"},
		"runtime":                       {"detect.go"},
		"os":                            {"detect.go", "json.go"},
		"time":                          {"links.go"}, // time.Duration and ParseDuration, never the clock
	}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			if files, restricted := allowed[path]; restricted {
				require.Contains(t, files, file, "%s imports %s", file, path)
			}
		}
		checked++
	}
	require.GreaterOrEqual(t, checked, 8)
}
