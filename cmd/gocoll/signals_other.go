//go:build !unix

package main

import (
	"os"
	"syscall"
)

// runSignals are the stopping signals alone: this system has no SIGUSR1
// or SIGUSR2 (and gocoll run starts no rank here; see launcher/job).
var runSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}
