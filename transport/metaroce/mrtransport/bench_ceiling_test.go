package mrtransport

import (
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/collectivetest"
)

// benchUDPCeiling moves 64 MiB per iteration from one loopback UDP socket
// to another in 65000-byte datagrams with plain writes and reads and no
// protocol: the sender keeps at most 1 MiB in flight, the receiver reads
// each datagram straight into its place in a 64 MiB destination. The two
// buffers stream from memory as benchGoodput's do, so the figures are the
// floor of what the kernel's two copies per byte cost here, which any
// transport over UDP sockets pays. A lost datagram fails the benchmark.
func benchUDPCeiling(b *testing.B) {
	const (
		size     = 64 << 20
		datagram = 65000
		window   = 1 << 20
	)
	rx, tx := listenLoopbackUDP(b), listenLoopbackUDP(b)
	to := rx.LocalAddr().(*net.UDPAddr).AddrPort()
	src, dst := make([]byte, size), make([]byte, size)
	for i := range src {
		src[i], dst[i] = byte(i), 1
	}
	var received atomic.Int64
	errc := make(chan error, 1)
	go func() { // the receiver: b.N messages of size bytes
		var total int64
		for total < int64(b.N)*size {
			off := int(total % size)
			if err := rx.SetReadDeadline(time.Now().Add(time.Second)); err != nil {
				errc <- err
				return
			}
			n, err := rx.Read(dst[off:min(off+datagram, size)])
			if err != nil {
				errc <- fmt.Errorf("after %d bytes: %w (a datagram was lost)", total, err)
				return
			}
			total += int64(n)
			received.Store(total)
		}
		errc <- nil
	}()
	b.SetBytes(size)
	b.ResetTimer()
	cpu0 := collectivetest.CPUTime()
	var sent int64
	for range b.N {
		for off := 0; off < size; off += datagram {
			for sent-received.Load() > window {
				time.Sleep(10 * time.Microsecond)
			}
			n, err := tx.WriteToUDPAddrPort(src[off:min(off+datagram, size)], to)
			if err != nil {
				b.Fatal(err)
			}
			sent += int64(n)
		}
	}
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	cpu := collectivetest.CPUTime() - cpu0
	b.ReportMetric(cpu.Seconds()/(float64(b.N)*size/1e9), "cpu-s/GB")
}

// listenLoopbackUDP opens a UDP socket on 127.0.0.1 with 8 MiB buffers,
// closed when b ends.
func listenLoopbackUDP(b *testing.B) *net.UDPConn {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	for _, set := range []func(int) error{c.SetReadBuffer, c.SetWriteBuffer} {
		if err := set(8 << 20); err != nil {
			b.Fatal(err)
		}
	}
	return c
}
