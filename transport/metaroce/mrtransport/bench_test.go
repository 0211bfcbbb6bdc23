package mrtransport

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/tcp"
)

// cpuTime returns the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// tcpWorld builds a TCP loopback world for the comparisons.
func tcpWorld(b testing.TB, n int) []transport.Endpoint {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eps, err := tcp.NewLocalWorld(ctx, n, tcp.Config{})
	if err != nil {
		b.Fatal(err)
	}
	out := make([]transport.Endpoint, n)
	for i, ep := range eps {
		out[i] = ep
		b.Cleanup(func() { _ = ep.Close() })
	}
	return out
}

func benchTag(op uint64, seq uint32) transport.Tag {
	return transport.Tag{OpKey: transport.OpKey{Comm: 0xbe, Op: op}, Seq: seq}
}

// BenchmarkGoodput64MiB moves one 64 MiB message from rank 0 to rank 1 per
// iteration on loopback, receive posted first, over MetaRoCE and over TCP
// in the same run. MB/s is goodput; cpu-s/GB the process's CPU seconds
// (both ranks) per GB moved.
func BenchmarkGoodput64MiB(b *testing.B) {
	worlds := []struct {
		name string
		mk   func(b *testing.B) []transport.Endpoint
	}{
		{"metaroce", func(b *testing.B) []transport.Endpoint { return asTransport(newTestWorld(b, 2, Config{})) }},
		{"tcp", func(b *testing.B) []transport.Endpoint { return tcpWorld(b, 2) }},
	}
	for _, w := range worlds {
		b.Run(w.name, func(b *testing.B) { benchGoodput(b, w.mk(b)) })
	}
}

func benchGoodput(b *testing.B, eps []transport.Endpoint) {
	const size = 64 << 20
	src, dst := make([]byte, size), make([]byte, size)
	for i := range src { // touch every page before timing
		src[i], dst[i] = byte(i), 1
	}
	ctx := context.Background()
	b.SetBytes(size)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := range b.N {
		r := eps[1].Recv(0, benchTag(1, uint32(i)), dst)
		s := eps[0].Send(1, benchTag(1, uint32(i)), src)
		if _, err := r.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(cpu.Seconds()/(float64(b.N)*size/1e9), "cpu-s/GB")
}

var _ = fmt.Sprint
