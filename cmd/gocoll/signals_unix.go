//go:build unix

package main

import (
	"os"
	"syscall"
)

// runSignals are the signals gocoll run forwards to every rank
// (launcher/job): the stopping ones, SIGUSR1 (which also asks for a
// diagnosis) and SIGUSR2.
var runSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2}
