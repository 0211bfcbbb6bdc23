//go:build linux

package crc32c

import (
	"hash/crc32"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuLoop runs f b.N times on one locked thread and reports its CPU time
// per call (cpu-ns/op), the figure to compare on a loaded host.
func cpuLoop(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	c0 := threadCPU()
	for range b.N {
		f()
	}
	b.ReportMetric(float64(threadCPU()-c0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkChecksum: a 9 KB datagram's CRC, in cache ("hot") and read from
// a 256 MiB buffer a datagram at a time ("cold", as a sender reads a
// large message's payload), by Update and by hash/crc32 for comparison.
// On a loaded host compare cpu-ns/op (the thread's CPU time), not ns/op.
func BenchmarkChecksum(b *testing.B) {
	const n = 8972
	cold := make([]byte, 256<<20)
	for i := range cold {
		cold[i] = byte(i)
	}
	for _, c := range []struct {
		name string
		f    func([]byte) uint32
	}{
		{"crc32c", Checksum},
		{"stdlib", func(p []byte) uint32 { return crc32.Checksum(p, table) }},
	} {
		b.Run("hot/"+c.name, func(b *testing.B) {
			p := cold[:n]
			b.SetBytes(n)
			cpuLoop(b, func() { sink += c.f(p) })
		})
		b.Run("cold/"+c.name, func(b *testing.B) {
			b.SetBytes(n)
			off := 0
			cpuLoop(b, func() {
				if off+n > len(cold) {
					off = 0
				}
				sink += c.f(cold[off : off+n])
				off += n
			})
		})
	}
}
