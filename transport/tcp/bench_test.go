package tcp

import (
	"context"
	"fmt"
	"testing"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/transport"
)

// BenchmarkGoodput64MiB moves one 64 MiB message from rank 0 to rank 1 per
// iteration on loopback, receive posted first; MB/s is goodput.
func BenchmarkGoodput64MiB(b *testing.B) {
	for _, cfg := range []struct {
		name string
		cfg  Config
	}{
		{"conns=1", Config{}},
		{"conns=4", Config{ConnsPerPeer: 4}},
		{"conns=1/autotune", Config{SocketBufferBytes: -1}},
		{"conns=4/autotune", Config{ConnsPerPeer: 4, SocketBufferBytes: -1}},
		{"conns=1/mptcp", Config{MultipathTCP: true}},
	} {
		b.Run(cfg.name, func(b *testing.B) { benchGoodput(b, cfg.cfg) })
	}
}

func benchGoodput(b *testing.B, cfg Config) {
	{
		{
			eps := newTestWorld(b, 2, cfg)
			const size = 64 << 20
			src, dst := make([]byte, size), make([]byte, size)
			for i := range src { // touch every page before timing
				src[i], dst[i] = byte(i), 1
			}
			ctx := context.Background()
			b.SetBytes(size)
			b.ResetTimer()
			for i := range b.N {
				r := eps[1].Recv(0, tag(1, uint32(i)), dst)
				s := eps[0].Send(1, tag(1, uint32(i)), src)
				if _, err := r.Wait(ctx); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Wait(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkPingPong8B measures the round trip of an 8-byte message from
// rank 0 to rank 1 and back; ns/op is one round trip.
func BenchmarkPingPong8B(b *testing.B) {
	eps := newTestWorld(b, 2, Config{})
	ctx := context.Background()
	errs := make(chan error, 1)
	b.ResetTimer()
	go func() {
		buf := make([]byte, 8)
		for i := range b.N {
			if _, err := eps[1].Recv(0, tag(1, uint32(i)), buf).Wait(ctx); err != nil {
				errs <- err
				return
			}
			if _, err := eps[1].Send(0, tag(2, uint32(i)), buf).Wait(ctx); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	ping, pong := make([]byte, 8), make([]byte, 8)
	for i := range b.N {
		r := eps[0].Recv(1, tag(2, uint32(i)), pong)
		if _, err := eps[0].Send(1, tag(1, uint32(i)), ping).Wait(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := r.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-errs; err != nil {
		b.Fatal(fmt.Errorf("responder: %w", err))
	}
}

// BenchmarkAllReduce8B runs an 8-byte AllReduce (recursive doubling) on 4
// ranks over loopback in one process; us/op is one AllReduce.
func BenchmarkAllReduce8B(b *testing.B) {
	eps := newTestWorld(b, 4, Config{})
	tps := make([]transport.Endpoint, len(eps))
	for i, ep := range eps {
		tps[i] = ep
	}
	collectivetest.BenchAllReduce(b, tps, 8)
}
