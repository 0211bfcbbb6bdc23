//go:build unix

package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// rusageSupported says whether cpuSeconds can read the CPU time here: on
// every Unix it can.
func rusageSupported() error { return nil }

// cpuSeconds is the user and system CPU time the process has spent
// (getrusage).
func cpuSeconds() (usr, sys float64) {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	usr = time.Duration(ru.Utime.Nano()).Seconds()
	sys = time.Duration(ru.Stime.Nano()).Seconds()
	return usr, sys
}

// switches is the process's voluntary and involuntary context switches
// (getrusage).
func switches() (vol, invol int64) {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return int64(ru.Nvcsw), int64(ru.Nivcsw)
}
