//go:build linux

package bench

import (
	"io"
	"os"
)

// readCPUTimes samples the first line of /proc/stat; false if it cannot be
// read or parsed.
func readCPUTimes() (cpuTimes, bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return cpuTimes{}, false
	}
	defer f.Close()
	buf := make([]byte, 4096) // the first line is about 60 bytes
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		return cpuTimes{}, false
	}
	return parseCPUStat(buf[:n])
}
