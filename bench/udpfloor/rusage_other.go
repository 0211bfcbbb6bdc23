//go:build !unix

package main

import "errors"

// rusageSupported refuses to run: the CPU time per datagram this command
// measures comes from getrusage, which this system does not have.
func rusageSupported() error {
	return errors.New("measuring CPU time (getrusage) is supported on Linux and macOS only")
}

// cpuSeconds is never reached here (rusageSupported).
func cpuSeconds() (usr, sys float64) { return 0, 0 }

func switches() (vol, invol int64) { return 0, 0 }
