package mrtransport

import (
	"context"
	"fmt"
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/transport"
)

// BenchmarkSendPath moves msgs messages of size bytes from rank 0 to rank
// 1 per iteration on loopback, all posted at once (receives first), at
// MTU 9000 (datagrams of 8972 bytes: full pieces gathered from the
// message), the same with payloads under the CRC as off loopback
// ("mtu9000crc": on loopback PayloadCRCAuto leaves them out), and at the
// default datagram size (payloads above 16 KiB gathered). MB/s is goodput; cpu-s/GB both ranks' CPU seconds per GB
// moved, the figure to compare on a loaded host. It measures the send
// path's cost of the bookkeeping of gathered writes (heldwrite.go) by
// A/B against a build without it.
func BenchmarkSendPath(b *testing.B) {
	for _, mtu := range []struct {
		name     string
		datagram int
		crc      PayloadCRC
	}{{"mtu9000", 8972, PayloadCRCAuto}, {"mtu9000crc", 8972, PayloadCRCOn}, {"default", 0, PayloadCRCAuto}} {
		for _, c := range []struct{ size, msgs int }{{1 << 20, 8}, {64 << 10, 64}} {
			b.Run(fmt.Sprintf("%s/%dx%d", mtu.name, c.msgs, c.size), func(b *testing.B) {
				eps := newTestWorld(b, 2, Config{MaxDatagram: mtu.datagram, PayloadCRC: mtu.crc})
				benchSendPath(b, eps, c.size, c.msgs)
			})
		}
	}
}

func benchSendPath(b *testing.B, eps []*Endpoint, size, msgs int) {
	src, dst := make([]byte, size*msgs), make([]byte, size*msgs)
	for i := range src { // touch every page before timing
		src[i], dst[i] = byte(i), 1
	}
	ctx := context.Background()
	rs, ss := make([]transport.Request, msgs), make([]transport.Request, msgs)
	b.SetBytes(int64(size * msgs))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := collectivetest.CPUTime()
	for i := range b.N {
		for k := range msgs {
			rs[k] = eps[1].Recv(0, benchTag(2, uint32(i*msgs+k)), dst[k*size:(k+1)*size])
		}
		for k := range msgs {
			ss[k] = eps[0].Send(1, benchTag(2, uint32(i*msgs+k)), src[k*size:(k+1)*size])
		}
		for k := range msgs {
			if _, err := rs[k].Wait(ctx); err != nil {
				b.Fatal(err)
			}
			if _, err := ss[k].Wait(ctx); err != nil {
				b.Fatal(err)
			}
			transport.Release(rs[k])
			transport.Release(ss[k])
		}
	}
	cpu := collectivetest.CPUTime() - cpu0
	b.ReportMetric(cpu.Seconds()/(float64(b.N)*float64(size*msgs)/1e9), "cpu-s/GB")
}
