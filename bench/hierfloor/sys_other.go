//go:build !unix

package main

import "time"

// cpuSeconds is 0 here: the CPU figures need getrusage (Unix).
func cpuSeconds() float64 { return 0 }

func pause(d time.Duration) { time.Sleep(d) }
