package mrtransport

import (
	"context"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// faults are the probabilities with which a faultySocket mistreats each
// datagram it is asked to write.
type faults struct {
	drop, dup, reorder, corrupt float64
}

// faultCounts count what faultySockets did, over a whole world.
type faultCounts struct {
	written, dropped, duplicated, reordered, corrupted atomic.Int64
}

// faultySocket interposes between the engine and a real UDP socket: on
// the way out it drops, duplicates, holds back (so that the next datagram
// overtakes it) and corrupts datagrams, each with its own probability,
// drawn from a seeded generator.
type faultySocket struct {
	PathSocket
	f      faults
	counts *faultCounts

	mu   sync.Mutex
	rng  *rand.Rand
	held []Message // datagrams held back, sent after the next write
	out  []Message // scratch
}

// faultyOpener returns a SocketOpener whose sockets interpose with f,
// seeded from seed, the rank and the path.
func faultyOpener(f faults, seed uint64, rank int, counts *faultCounts) SocketOpener {
	return func(path int, addr netip.AddrPort) (PathSocket, error) {
		s, err := OpenUDP(addr, DefaultSocketBuffer)
		if err != nil {
			return nil, err
		}
		rng := rand.New(rand.NewPCG(seed, uint64(rank)<<32|uint64(path)))
		return &faultySocket{PathSocket: s, f: f, counts: counts, rng: rng}, nil
	}
}

// copyMessage returns m with a buffer of its own.
func ownCopy(m Message) Message {
	m.Buf = append([]byte(nil), m.Buf[:m.N]...)
	return m
}

func (s *faultySocket) WriteBatch(ms []Message) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.out[:0]
	for _, m := range ms {
		s.counts.written.Add(1)
		r := s.rng.Float64()
		switch {
		case r < s.f.drop:
			s.counts.dropped.Add(1)
			continue
		case r < s.f.drop+s.f.reorder:
			s.counts.reordered.Add(1)
			s.held = append(s.held, ownCopy(m))
			continue
		case r < s.f.drop+s.f.reorder+s.f.corrupt && m.N > 0:
			s.counts.corrupted.Add(1)
			m = ownCopy(m)
			bit := s.rng.IntN(m.N * 8)
			m.Buf[bit/8] ^= 1 << (bit % 8)
		}
		out = append(out, m)
		if s.rng.Float64() < s.f.dup {
			s.counts.duplicated.Add(1)
			out = append(out, m)
		}
		// Held datagrams go after a later one: they have been overtaken.
		out = append(out, s.held...)
		s.held = s.held[:0]
	}
	s.out = out
	if len(out) > 0 {
		if _, err := s.PathSocket.WriteBatch(out); err != nil {
			return 0, err
		}
	}
	clear(s.out)
	return len(ms), nil
}

// faultyWorld builds a loopback world whose sockets interpose with f.
func faultyWorld(t testing.TB, size int, f faults, seed uint64, counts *faultCounts) []*Endpoint {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	listeners := make([]*Listener, size)
	addrs := make([]PeerAddr, size)
	for r := range size {
		l, err := Listen(ctx, Config{Rank: r, Size: size, Paths: 4, OpenSocket: faultyOpener(f, seed, r, counts)})
		require.NoError(t, err)
		listeners[r], addrs[r] = l, l.Addr()
	}
	eps := connectListeners(t, ctx, listeners, addrs)
	t.Cleanup(func() {
		for _, ep := range eps {
			require.NoError(t, ep.Close())
		}
	})
	return eps
}

// TestFaultyNetworkExact runs point-to-point messages and collectives over
// sockets that drop, duplicate, reorder and corrupt real datagrams. Every
// result must stay exact, and the faults must have happened and been
// repaired (retransmissions, checksum drops).
func TestFaultyNetworkExact(t *testing.T) {
	f := faults{drop: 0.03, dup: 0.02, reorder: 0.03, corrupt: 0.01}
	var counts faultCounts
	eps := faultyWorld(t, 3, f, 42, &counts)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, n := range []int{0, 1, 1000, 70 << 10, 3 << 20} {
		tag := transport.Tag{OpKey: transport.OpKey{Comm: 9, Op: 1}, Seq: uint32(i)}
		buf := make([]byte, n)
		s := eps[0].Send(2, tag, transporttest.Pattern(n, uint64(i)))
		got, err := eps[2].Recv(0, tag, buf).Wait(ctx)
		require.NoError(t, err)
		require.Equal(t, n, got)
		require.NoError(t, transporttest.Verify(buf, uint64(i)))
		_, err = s.Wait(ctx)
		require.NoError(t, err)
	}

	collectivetest.Run(t, func(testing.TB, int) []transport.Endpoint { return asTransport(eps) }, collectivetest.Options{
		Sizes:  []int{3},
		Counts: []int{0, 7, 1023, 65539},
		DTypes: []dtype.DataType{dtype.Float32, dtype.Int8},
		Ops:    []reduce.Op{reduce.Sum, reduce.Max},
	})

	var corrupted, retransmits int64
	for _, ep := range eps {
		st := ep.Stats()
		corrupted += st.Core.DropChecksum
		for _, p := range st.Peers {
			for _, ps := range p.Paths {
				retransmits += ps.Retransmits
			}
		}
	}
	t.Logf("written %d, dropped %d, duplicated %d, reordered %d, corrupted %d; checksum drops %d, retransmits %d",
		counts.written.Load(), counts.dropped.Load(), counts.duplicated.Load(), counts.reordered.Load(),
		counts.corrupted.Load(), corrupted, retransmits)
	require.Positive(t, counts.dropped.Load())
	require.Positive(t, counts.duplicated.Load())
	require.Positive(t, counts.reordered.Load())
	require.Positive(t, counts.corrupted.Load())
	require.Positive(t, corrupted, "corrupted datagrams must be caught by the checksum")
	require.Positive(t, retransmits, "dropped datagrams must be resent")
}

// connectListeners connects every listener to the world of addrs at once,
// as the ranks of a job do, and returns their endpoints in rank order,
// failing t if one does not connect.
func connectListeners(t testing.TB, ctx context.Context, listeners []*Listener, addrs []PeerAddr) []*Endpoint {
	t.Helper()
	eps := make([]*Endpoint, len(listeners))
	errs := make([]error, len(listeners))
	var wg sync.WaitGroup
	for r, l := range listeners {
		wg.Go(func() { eps[r], errs[r] = l.Connect(ctx, addrs) })
	}
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	return eps
}
