package mrtransport

import (
	"context"
	"fmt"
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
)

// BenchmarkPathCount measures what a connection's number of paths costs
// on loopback with 8972-byte datagrams (a 9000-byte MTU's): goodput of 64
// MiB messages (MB/s), CPU seconds of both ranks per GB and per datagram
// written (cpu-us/dgram), the receiver's datagrams (ACKs) per datagram of
// the sender (ack-ratio). (Memory: each path socket's reader holds Batch
// buffers of ReadBufferSize, 1 MiB by default, whatever the peers.)
func BenchmarkPathCount(b *testing.B) {
	for _, paths := range []int{8, 16, 32} {
		b.Run(fmt.Sprintf("paths=%d", paths), func(b *testing.B) {
			ctx := context.Background()
			eps, err := NewLocalWorld(ctx, 2, Config{Paths: paths, MaxDatagram: 8972})
			if err != nil {
				b.Fatal(err)
			}
			const size = 64 << 20
			src, dst := make([]byte, size), make([]byte, size)
			for i := range src {
				src[i], dst[i] = byte(i), 1
			}
			s0, r0 := eps[0].Stats().Engine, eps[1].Stats().Engine
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
			b.StopTimer()
			s1, r1 := eps[0].Stats().Engine, eps[1].Stats().Engine
			sent, acks := s1.DatagramsWritten-s0.DatagramsWritten, r1.DatagramsWritten-r0.DatagramsWritten
			b.ReportMetric(cpu.Seconds()/(float64(b.N)*size/1e9), "cpu-s/GB")
			b.ReportMetric(cpu.Seconds()*1e6/float64(sent+acks), "cpu-us/dgram")
			b.ReportMetric(float64(acks)/float64(sent), "ack-ratio")
			for _, ep := range eps {
				if err := ep.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
