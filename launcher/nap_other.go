//go:build !linux

package launcher

import "time"

// rawNapWorks reports whether rawNap sleeps without the runtime seeing a
// system call: not here (holdMonitor then does nothing).
const rawNapWorks = false

// rawNap is not used where rawNapWorks is false.
func rawNap(time.Duration) {}
