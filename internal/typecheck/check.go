package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// listed is the part of `go list -json` that check reads.
type listed struct {
	ImportPath string
	Dir        string
	Module     *struct{ Main bool }
	GoFiles    []string // for a test variant, with its _test.go files
	ImportMap  map[string]string
	Error      *struct{ Err string }
}

// check type-checks the packages patterns name (in dir; "" is the current
// directory) and their tests for the target `go env` reports, writes each
// error to w and returns their number; err is a failure to list or read
// them.
func check(w io.Writer, dir string, patterns []string) (int, error) {
	pkgs, err := list(dir, patterns)
	if err != nil {
		return 0, err
	}
	arch, err := goEnv(dir, "GOARCH")
	if err != nil {
		return 0, err
	}
	sizes := types.SizesFor("gc", arch)
	if sizes == nil {
		return 0, fmt.Errorf("no sizes for GOARCH %q", arch)
	}
	fset := token.NewFileSet()
	done := map[string]*types.Package{"unsafe": types.Unsafe}
	bad := 0
	report := func(err error) {
		fmt.Fprintln(w, err)
		bad++
	}
	for _, p := range pkgs {
		if p.ImportPath == "unsafe" || strings.HasSuffix(p.ImportPath, ".test") {
			continue // built in; a generated test main
		}
		if p.Error != nil {
			report(fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err))
			continue
		}
		files, err := parse(fset, p)
		if err != nil {
			report(err)
			continue
		}
		conf := types.Config{
			Sizes:            sizes,
			IgnoreFuncBodies: p.Module == nil || !p.Module.Main,
			Importer:         mapImporter{done, p.ImportMap},
			Error:            report,
		}
		path, _, _ := strings.Cut(p.ImportPath, " ") // "p [p.test]": p with its tests
		done[p.ImportPath], _ = conf.Check(path, fset, files, nil)
	}
	return bad, nil
}

// list returns the packages patterns name, their test variants and all
// their dependencies, each after those it imports, as built without cgo.
func list(dir string, patterns []string) ([]*listed, error) {
	args := append([]string{"list", "-e", "-test", "-deps",
		"-json=ImportPath,Dir,Module,GoFiles,ImportMap,Error", "--"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // cgo files cannot be checked from source
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []*listed
	for dec := json.NewDecoder(strings.NewReader(string(out))); ; {
		p := new(listed)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// goEnv returns `go env name` run in dir.
func goEnv(dir, name string) (string, error) {
	cmd := exec.Command("go", "env", name)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// parse parses p's Go files.
func parse(fset *token.FileSet, p *listed) ([]*ast.File, error) {
	files := make([]*ast.File, 0, len(p.GoFiles))
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// mapImporter imports the packages checked so far, by the path an import
// of the package being checked resolves to (its ImportMap, for test
// variants and vendored packages).
type mapImporter struct {
	done      map[string]*types.Package
	importMap map[string]string
}

func (m mapImporter) Import(path string) (*types.Package, error) {
	if to, ok := m.importMap[path]; ok {
		path = to
	}
	if p := m.done[path]; p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("%s: not checked before its importer", path)
}
