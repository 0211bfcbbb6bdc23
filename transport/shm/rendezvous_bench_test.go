//go:build linux

package shm_test

import (
	"context"
	"syscall"
	"testing"

	"github.com/gocoll/gocoll/transport"
)

// BenchmarkRendezvousFanOut measures the per-message machinery of
// rendezvous sends as a shared-memory AllToAll drives it, without waits
// between ranks: one goroutine posts a 5 KiB send (just above EagerMax,
// so the copy itself is short) from rank 0 to each of ranks 1-3, posts
// their receives, waits for the receives (a spin whose poll matches and
// copies each) and then for the sends (reapCopied). cpu-ns/op is the
// process's CPU time (user and system) per round of 3 messages, which a
// loaded host moves less than the wall time.
func BenchmarkRendezvousFanOut(b *testing.B) {
	_, tes := benchWorld(b, 4)
	ctx := context.Background()
	const size = 5 << 10
	src := make([]byte, size)
	dst := make([][]byte, 4)
	for i := range dst {
		dst[i] = make([]byte, size)
	}
	var sends, recvs [4]transport.Request
	round := func(k int) {
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: uint64(k + 1)}}
		for p := 1; p < 4; p++ {
			sends[p] = tes[0].Send(p, tag, src)
		}
		for p := 1; p < 4; p++ {
			recvs[p] = tes[p].Recv(0, tag, dst[p])
		}
		for p := 1; p < 4; p++ {
			if _, err := recvs[p].Wait(ctx); err != nil {
				b.Fatal(err)
			}
			if _, err := sends[p].Wait(ctx); err != nil {
				b.Fatal(err)
			}
			release(recvs[p])
			release(sends[p])
		}
	}
	round(-1)
	c0 := processCPU(b)
	b.ResetTimer()
	for k := range b.N {
		round(k)
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-c0)/float64(b.N), "cpu-ns/op")
}

func release(r transport.Request) {
	if x, ok := r.(transport.Releaser); ok {
		x.Release()
	}
}

// processCPU is the process's user and system CPU time so far, in ns.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
