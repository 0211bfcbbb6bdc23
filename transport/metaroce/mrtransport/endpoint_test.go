package mrtransport

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// testWait bounds the tests' waits (testCtx, newTestWorld's set-up): 20 s,
// times transporttest.RaceSlowdown under the race detector
// (TestStormCollectiveLoopback took 16 s of 20 under -race at load 13, and
// failed 3 of 3 at load 20-30). It bounds a failure only: a test that
// passes waits as long as its calls take.
const testWait = 20 * time.Second * transporttest.RaceSlowdown

// testCtx is a context that ends testWait from now, or when t ends.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	t.Cleanup(cancel)
	return ctx
}

// allReduceSum runs an int64 sum AllReduce of count elements on every rank
// of eps (rank r contributes r+i at index i) and checks each result.
func allReduceSum(t testing.TB, comms []*collective.Comm, count int) {
	t.Helper()
	errs := make(chan error, len(comms))
	for r, c := range comms {
		go func() {
			in := make([]int64, count)
			for i := range in {
				in[i] = int64(r + i)
			}
			out := make([]int64, count)
			if err := collective.AllReduce(testCtx(t), c, in, out, reduce.Sum); err != nil {
				errs <- err
				return
			}
			n := int64(len(comms))
			for i, v := range out {
				if want := n*int64(i) + n*(n-1)/2; v != want {
					errs <- errors.New("wrong AllReduce result")
					return
				}
			}
			errs <- nil
		}()
	}
	for range comms {
		require.NoError(t, <-errs)
	}
}

func newComms(t testing.TB, eps []*Endpoint) []*collective.Comm {
	comms := make([]*collective.Comm, len(eps))
	for r, ep := range eps {
		c, err := collective.New(ep, 1, collective.Config{})
		require.NoError(t, err)
		comms[r] = c
	}
	return comms
}

// TestGarbageDatagrams sends random bytes to every path socket of rank 1
// while the ranks run AllReduces: the core drops and counts every one of
// them, and the results stay exact.
func TestGarbageDatagrams(t *testing.T) {
	eps := newTestWorld(t, 3, Config{Paths: 4})
	comms := newComms(t, eps)
	before := droppedGarbage(eps[1].Stats().Core)

	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer conn.Close()
	rng := rand.New(rand.NewPCG(7, 7))
	const perPath = 200
	sent := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range perPath {
			for _, a := range eps[1].Addr().Paths {
				b := make([]byte, 1+rng.IntN(1400))
				for i := range b {
					b[i] = byte(rng.Uint32())
				}
				if rng.IntN(4) == 0 {
					b[0] = 1 // the right version byte: caught by the checksum
				}
				if _, err := conn.WriteToUDPAddrPort(b, a); err == nil {
					sent++
				}
			}
		}
	}()
	for _, count := range []int{1, 1000, 100000} {
		allReduceSum(t, comms, count)
	}
	<-done
	require.Eventually(t, func() bool { return droppedGarbage(eps[1].Stats().Core)-before >= int64(sent) },
		10*time.Second, 10*time.Millisecond, "garbage datagrams dropped and counted")
	allReduceSum(t, comms, 4097)
	t.Logf("sent %d garbage datagrams; core drops %+v", sent, eps[1].Stats().Core)
}

// droppedGarbage sums the core's drop counters that garbage lands in.
func droppedGarbage(s metaroce.EndpointStats) int64 {
	return s.DropShort + s.DropVersion + s.DropChecksum + s.DropMalformed + s.DropTooLarge
}

// TestCloseReleasesGoroutines builds and uses worlds, closes them, and
// checks that the goroutine count returns to where it was.
func TestCloseReleasesGoroutines(t *testing.T) {
	baseline := runtime.NumGoroutine()
	for range 3 {
		ctx := testCtx(t)
		eps, err := NewLocalWorld(ctx, 3, Config{})
		require.NoError(t, err)
		comms := newComms(t, eps)
		allReduceSum(t, comms, 10000)
		pending := eps[0].Recv(1, transport.Tag{}, make([]byte, 8)) // left pending at Close
		for _, ep := range eps {
			require.NoError(t, ep.Close())
		}
		_, err = pending.Wait(ctx)
		require.ErrorIs(t, err, transport.ErrClosed)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after Close, %d before:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	}
}

// TestPeerFailure closes one rank and checks that the others' pending and
// later requests with it fail with a *transport.PeerError naming it. Sends
// are not eager here: an eager send to a rank whose CLOSE has not arrived
// yet succeeds, as a TCP write does.
func TestPeerFailure(t *testing.T) {
	eps := newTestWorld(t, 3, Config{EagerBytes: -1})
	ctx := testCtx(t)
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 3, Op: 1}}
	pending := eps[0].Recv(2, tag, make([]byte, 8))
	require.NoError(t, eps[2].Close())
	var pe *transport.PeerError
	_, err := pending.Wait(ctx)
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 2, pe.Rank)
	_, err = eps[1].Send(2, tag, []byte{1}).Wait(ctx)
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 2, pe.Rank)
	// The others still talk.
	s := eps[0].Send(1, tag, transporttest.Pattern(100, 1))
	buf := make([]byte, 100)
	_, err = eps[1].Recv(0, tag, buf).Wait(ctx)
	require.NoError(t, err)
	require.NoError(t, transporttest.Verify(buf, 1))
	_, err = s.Wait(ctx)
	require.NoError(t, err)
}

// TestIdleTimeoutIsPeerError silences a peer without a CLOSE (its sockets
// stop reading and writing) and checks that the connection fails by idle
// timeout with a PeerError. The sockets are plain ones, which ignore the
// ICMP errors that would otherwise report the closed peer sooner (see
// TestDeadPeerFailsPendingReceive).
func TestIdleTimeoutIsPeerError(t *testing.T) {
	cfg := Config{Core: metaroce.Config{IdleTimeout: 300 * time.Millisecond},
		OpenSocket: func(_ int, addr netip.AddrPort) (PathSocket, error) { return OpenUDP(addr, DefaultSocketBuffer) }}
	eps := newTestWorld(t, 2, cfg)
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 3, Op: 1}}
	pending := eps[0].Recv(1, tag, make([]byte, 8))
	eps[1].eng.stop() // silent: no CLOSE is sent
	_, err := pending.Wait(testCtx(t))
	var pe *transport.PeerError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, 1, pe.Rank)
	require.ErrorIs(t, err, metaroce.ErrIdleTimeout)
}

func TestConfigErrors(t *testing.T) {
	ctx := testCtx(t)
	for _, cfg := range []Config{
		{Size: 0},
		{Size: 2, Rank: 2},
		{Size: 2, Paths: 300},
		{Size: 2, MaxDatagram: 100},
		{Size: 2, Batch: MaxBatch + 1},
		{Size: 2, Core: metaroce.Config{AckEvery: 1000}},
	} {
		_, err := Listen(ctx, cfg)
		require.Error(t, err, "%+v", cfg)
	}
	_, err := NewLocalWorld(ctx, 0, Config{})
	require.Error(t, err)
}

// TestConnectNamesMissingRanks connects a rank whose peers never come up:
// Connect fails when its context ends, naming them, and Close of the
// listener ends a Connect in progress.
func TestConnectNamesMissingRanks(t *testing.T) {
	l, err := Listen(testCtx(t), Config{Rank: 0, Size: 3, Paths: 2})
	require.NoError(t, err)
	defer l.Close()
	other, err := Listen(testCtx(t), Config{Rank: 1, Size: 3, Paths: 2})
	require.NoError(t, err)
	defer other.Close()
	absent := PeerAddr{Paths: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:9"), netip.MustParseAddrPort("127.0.0.1:9")}}
	addrs := []PeerAddr{l.Addr(), other.Addr(), absent}
	go func() { _, _ = other.Connect(context.Background(), addrs) }()
	// Long enough for rank 1's handshake on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, err = l.Connect(ctx, addrs)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "ranks [2] not connected")

	done := make(chan error, 1)
	go func() { _, err := l.Connect(context.Background(), addrs); done <- err }()
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, l.Close())
	require.Error(t, <-done)
	_, err = l.Connect(testCtx(t), []PeerAddr{l.Addr()})
	require.Error(t, err, "wrong number of addresses")
}
