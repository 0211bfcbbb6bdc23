// Command typecheck type-checks packages and their tests from source for
// the target in the environment (GOARCH, GOOS, build tags) without
// compiling anything: test.sh runs it with GOARCH=386 to find what the
// 32-bit build rejects (an int constant above 2^31-1, an overflowing
// array length), the check `GOARCH=386 go vet ./...` made at the cost of
// compiling the standard library and every dependency for 386 (125 CPU-s
// with a cold build cache; this takes about 6).
//
// Usage: go build -o typecheck ./internal/typecheck && GOARCH=386 ./typecheck ./...
// (built for this machine: `GOARCH=386 go run` would build a 386 binary,
// which a kernel without 32-bit emulation cannot run).
//
// It lists the packages with `go list -e -test -deps`, type-checks them in
// that order (dependencies first) with the target's sizes, function bodies
// only for the main module's packages, prints every error and exits 1 if
// there was one.
package main

import (
	"fmt"
	"os"
)

func main() {
	n, err := check(os.Stdout, "", os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "typecheck:", err)
		os.Exit(2)
	}
	if n > 0 {
		fmt.Fprintf(os.Stderr, "typecheck: %d errors\n", n)
		os.Exit(1)
	}
}
