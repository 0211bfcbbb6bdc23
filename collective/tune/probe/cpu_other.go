//go:build !unix

package probe

import "time"

// processCPU returns false: this system's CPU time is not read.
func processCPU() (time.Duration, bool) { return 0, false }
