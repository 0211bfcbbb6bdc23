//go:build !linux

package bench

// readCPUTimes is not measured on this platform: always false (unknown).
func readCPUTimes() (cpuTimes, bool) { return cpuTimes{}, false }
