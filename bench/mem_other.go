//go:build !linux

package bench

// allocBuffer returns n bytes from the Go heap and a no-op release.
func allocBuffer(n int64) ([]byte, func(), error) {
	return make([]byte, n), func() {}, nil
}

// peakRSS is not measured on this platform: 0.
func peakRSS() int64 { return 0 }

// physicalMemory is not known on this platform: 0.
func physicalMemory() int64 { return 0 }
