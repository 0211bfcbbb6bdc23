package collective

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
)

// countingEndpoint counts the messages an endpoint sends.
type countingEndpoint struct {
	transport.Endpoint
	sends atomic.Int64
}

func (e *countingEndpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	e.sends.Add(1)
	return e.Endpoint.Send(peer, tag, buf)
}

// countingComms returns n communicators over an in-process world whose
// endpoints count their sends.
func countingComms(t *testing.T, n int) ([]*Comm, []*countingEndpoint) {
	w, err := inproc.NewWorld(n)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	comms := make([]*Comm, n)
	eps := make([]*countingEndpoint, n)
	for r, ep := range w.Endpoints() {
		eps[r] = &countingEndpoint{Endpoint: ep}
		comms[r], err = New(eps[r], 1, Config{})
		require.NoError(t, err)
	}
	return comms, eps
}

// runAll runs fn on every rank at once and returns the errors.
func runAll(n int, fn func(ctx context.Context, r int) error) []error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() { errs[r] = fn(ctx, r) })
	}
	wg.Wait()
	return errs
}

// TestSmallAllReduceMessages checks that a small AllReduce at a power-of-two
// size sends one message per rank and round: the headers travel with the
// data, and the tree neighbours are the recursive doubling's partners. (A
// wait that lasts a millisecond sends headers to the tree neighbours ahead
// of their data; so the fewest sends of several operations is checked.)
func TestSmallAllReduceMessages(t *testing.T) {
	for _, n := range []int{2, 4, 8} {
		t.Run(fmt.Sprint("n=", n), func(t *testing.T) {
			comms, eps := countingComms(t, n)
			const ops = 10
			fewest := make([]int64, n)
			errs := runAll(n, func(ctx context.Context, r int) error {
				fewest[r] = 1 << 62
				for range ops {
					before := eps[r].sends.Load()
					x := []float64{float64(r), 1}
					if err := AllReduce(ctx, comms[r], x, x, Sum); err != nil {
						return err
					}
					if want := float64(n * (n - 1) / 2); x[0] != want || x[1] != float64(n) {
						return fmt.Errorf("got %v, want [%v %v]", x, want, n)
					}
					fewest[r] = min(fewest[r], eps[r].sends.Load()-before)
				}
				return nil
			})
			rounds := 0
			for p := 1; p < n; p <<= 1 {
				rounds++
			}
			for r := range n {
				require.NoError(t, errs[r], "rank %d", r)
				require.EqualValues(t, rounds, fewest[r], "rank %d: fewest sends of one operation", r)
			}
		})
	}
}

// twoOps starts one operation with equal headers on each of two ranks, so
// that a test can drive the header exchange directly.
func twoOps(t *testing.T, ctx context.Context) ([]*Comm, []*operation) {
	comms, _ := countingComms(t, 2)
	h := header{kind: KindAllReduce, dt: dtype.Uint8, op: reduce.Sum, root: -1, count: 8, algo: AlgoRecursiveDoubling}
	ops := make([]*operation, 2)
	for r, c := range comms {
		o, err := c.begin(ctx, h)
		require.NoError(t, err)
		ops[r] = o
	}
	return comms, ops
}

// TestCarriedMessageWhereLargeExpected checks that a first message that
// travelled with its header, where the receiver expects a message too
// large to travel so, fails both ranks instead of leaving the receive to
// wait for a message that never comes.
func TestCarriedMessageWhereLargeExpected(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, ops := twoOps(t, ctx)
	errs := runAll(2, func(ctx context.Context, r int) error {
		o := ops[r]
		return o.execute(func(o *operation) error {
			if r == 0 {
				return o.wait(o.send(1, make([]byte, 8)), 1)
			}
			return o.waitRecv(o.recv(0, make([]byte, inlineBytesMax+1)))
		})
	})
	require.ErrorContains(t, errs[1], fmt.Sprintf("rank 0 sent 8 bytes where %d were expected", inlineBytesMax+1))
	// Rank 0 may have finished before rank 1 aborted: its send went out and
	// the headers match.
}

// TestCarriedMessageNobodyTook checks that a first message that travelled
// with its header but that the receiver never asked for is an error at the
// receiver's finish, not silently dropped.
func TestCarriedMessageNobodyTook(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, ops := twoOps(t, ctx)
	errs := runAll(2, func(ctx context.Context, r int) error {
		return ops[r].execute(func(o *operation) error {
			if r == 0 {
				o.send(1, make([]byte, 8))
			}
			return nil
		})
	})
	require.ErrorContains(t, errs[1], "rank 0 sent a 8-byte message this rank did not expect")
}

// TestFirstMessageNotCarried checks that a small first receive takes a
// message that was sent on its own, after a header sent earlier.
func TestFirstMessageNotCarried(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, ops := twoOps(t, ctx)
	got := make([]byte, 3)
	errs := runAll(2, func(ctx context.Context, r int) error {
		return ops[r].execute(func(o *operation) error {
			if r == 0 {
				pr := o.recv(1, make([]byte, 0))
				if err := o.waitRecv(pr); err != nil { // announces this rank's header first
					return err
				}
				return o.wait(o.send(1, []byte{1, 2, 3}), 1)
			}
			s := o.send(0, nil)
			if err := o.waitRecv(o.recv(0, got)); err != nil {
				return err
			}
			return o.wait(s, 0)
		})
	})
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.Equal(t, []byte{1, 2, 3}, got)
}

func FuzzParseHeader(f *testing.F) {
	plain := header{kind: KindAllReduce, dt: dtype.Float32, op: reduce.Sum, algo: AlgoRing, root: -1, chunk: 4096, count: 7, pairCount: 3}
	b := make([]byte, headerLen)
	plain.marshal(b)
	f.Add(bytes.Clone(b))
	carrying := plain
	carrying.carries = true
	b = make([]byte, headerLen+5)
	carrying.marshal(b)
	copy(b[headerLen:], "hello")
	f.Add(b)
	f.Add([]byte{headerMagic, headerVer})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, inline, err := parseHeader(b)
		if err != nil {
			return
		}
		if len(b) > headerMsgMax || (!h.carries && len(b) != headerLen) {
			t.Fatalf("accepted a %d-byte header message (carries %v)", len(b), h.carries)
		}
		again := make([]byte, headerLen)
		h.marshal(again)
		if !bytes.Equal(again, b[:headerLen]) {
			t.Fatalf("header %x re-encodes as %x", b[:headerLen], again)
		}
		if h.carries && !bytes.Equal(inline, b[headerLen:]) {
			t.Fatalf("carried message %x, want %x", inline, b[headerLen:])
		}
	})
}

// chunkyEndpoint reports a transport's preferred chunk size.
type chunkyEndpoint struct {
	transport.Endpoint
	chunk int
}

func (e chunkyEndpoint) Traits() transport.Traits { return transport.Traits{ChunkBytes: e.chunk} }

// TestChunkFromTraits checks that a communicator pipelines in the chunk
// size its transport prefers unless Config sets one, and ignores a
// preference outside Config's range.
func TestChunkFromTraits(t *testing.T) {
	w, err := inproc.NewWorld(1)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	ep := w.Endpoints()[0]
	for _, tc := range []struct {
		pref, set, want int
	}{
		{0, 0, defaultChunkBytes},
		{2 << 20, 0, 2 << 20},
		{2 << 20, 64 << 10, 64 << 10},
		{ChunkBytesMax + 1, 0, defaultChunkBytes},
		{ChunkBytesMin - 1, 0, defaultChunkBytes},
	} {
		c, err := New(chunkyEndpoint{ep, tc.pref}, 1, Config{ChunkBytes: tc.set})
		require.NoError(t, err)
		require.Equal(t, tc.want, c.cfg.ChunkBytes, "preferred %d, configured %d", tc.pref, tc.set)
		require.Equal(t, tc.want, c.scratch.size)
	}
}
