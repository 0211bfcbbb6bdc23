//go:build unix

package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// cpuSeconds is the CPU time (user + system) the process has spent so far
// (getrusage, all its threads).
func cpuSeconds() float64 {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// pause sleeps d in a system call of its own (nanosleep): an idle Go
// timer's waits are whole milliseconds.
func pause(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	_ = unix.Nanosleep(&ts, nil)
}
