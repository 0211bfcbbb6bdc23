package mrtransport

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
	"github.com/gocoll/gocoll/transport/tcp"
)

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
// (both ranks) per GB moved. udp-ceiling is what the same two copies per
// byte cost with no protocol at all (bench_ceiling_test.go): the bound of
// any transport over UDP sockets on this host.
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
	b.Run("udp-ceiling", benchUDPCeiling)
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
	cpu0 := collectivetest.CPUTime()
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
	cpu := collectivetest.CPUTime() - cpu0
	b.ReportMetric(cpu.Seconds()/(float64(b.N)*size/1e9), "cpu-s/GB")
}

// benchWorlds are the transports the collective benchmarks compare, each
// building a 4-rank world.
var benchWorlds = []struct {
	name string
	mk   func(b *testing.B, n int) []transport.Endpoint
}{
	{"metaroce", func(b *testing.B, n int) []transport.Endpoint { return asTransport(newTestWorld(b, n, Config{})) }},
	{"tcp", func(b *testing.B, n int) []transport.Endpoint { return tcpWorld(b, n) }},
	{"inproc", func(b *testing.B, n int) []transport.Endpoint {
		w, err := inproc.NewWorld(n)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = w.Close() })
		return w.Endpoints()
	}},
}

// BenchmarkAllReduce measures a float32 Avg AllReduce at 4 ranks from 1 KiB
// to 64 MiB over MetaRoCE, TCP and inproc in one run, reporting nccl-tests'
// bus bandwidth: busbw = size/time * 2(n-1)/n.
func BenchmarkAllReduce(b *testing.B) {
	const n = 4
	for size := 1 << 10; size <= 64<<20; size <<= 4 {
		for _, w := range benchWorlds {
			b.Run(fmt.Sprintf("bytes=%d/%s", size, w.name), func(b *testing.B) {
				collectivetest.BenchAllReduce(b, w.mk(b, n), size)
			})
		}
	}
}

// BenchmarkAllReduceLatency8B measures an 8-byte AllReduce at 4 ranks over
// MetaRoCE and TCP; us/op is its latency.
func BenchmarkAllReduceLatency8B(b *testing.B) {
	for _, w := range benchWorlds[:2] {
		b.Run(w.name, func(b *testing.B) { collectivetest.BenchAllReduce(b, w.mk(b, 4), 8) })
	}
}
