//go:build !linux

package main

import (
	"context"
	"fmt"
	"io"
)

// labMain is `gocoll lab` where it cannot run: a lab is Linux network
// namespaces, and its delay daemon binds NFQUEUE over netlink.
func labMain(_ context.Context, _ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "gocoll lab: needs Linux (network namespaces, NFQUEUE)")
	return exitUsage
}
