//go:build linux

package route_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/collectivetest"
	"github.com/gocoll/gocoll/collective/dtype"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
	"github.com/gocoll/gocoll/transport/route"
	"github.com/gocoll/gocoll/transport/shm"
	"github.com/gocoll/gocoll/transport/transporttest"
)

// newSplitWorld builds size routed endpoints as if ranks 2h and 2h+1 shared
// host h: shared memory between them, the in-process transport between
// hosts.
func newSplitWorld(t testing.TB, size int) []transport.Endpoint {
	t.Helper()
	net, err := inproc.NewWorld(size)
	if err != nil {
		t.Fatal(err)
	}
	return newSplitWorldOver(t, size, func(r int) transport.Endpoint { return net.Endpoint(r) })
}

// newSplitWorldOver is newSplitWorld with far(r), rank r's endpoint of
// another transport, between hosts.
func newSplitWorldOver(t testing.TB, size int, far func(r int) transport.Endpoint) []transport.Endpoint {
	t.Helper()
	host := func(r int) int { return r / 2 }
	listeners := make([]*shm.Listener, size)
	for r := range size {
		l, err := shm.Listen(shm.Config{Rank: r, Size: size})
		if err != nil {
			t.Fatal(err)
		}
		listeners[r] = l
	}
	locals := make([]*shm.Endpoint, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size { // concurrently: Connect waits for its peers'
		addrs := make([]string, size)
		for p := range size {
			if host(p) == host(r) {
				addrs[p] = listeners[p].Addr().String()
			}
		}
		wg.Go(func() { locals[r], errs[r] = listeners[r].Connect(context.Background(), addrs) })
	}
	wg.Wait()
	out := make([]transport.Endpoint, size)
	for r := range size {
		local, err := locals[r], errs[r]
		if err != nil {
			t.Fatal(err)
		}
		byPeer := make([]transport.Endpoint, size)
		for p := range size {
			byPeer[p] = far(r)
			if host(p) == host(r) {
				byPeer[p] = local
			}
		}
		ep, err := route.New(byPeer)
		if err != nil {
			t.Fatal(err)
		}
		out[r] = ep
		t.Cleanup(func() { _ = ep.Close() })
	}
	return out
}

func TestConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T, size int) []transport.Endpoint { return newSplitWorld(t, size) })
}

// TestCollectiveTable runs the collectives over hosts of two ranks.
func TestCollectiveTable(t *testing.T) {
	opts := collectivetest.Options{
		Sizes:  []int{2, 3, 5},
		Counts: []int{0, 1, 1023, 65539},
		DTypes: []dtype.DataType{dtype.Float32, dtype.Int8},
	}
	if testing.Short() {
		opts.Sizes, opts.Counts = []int{3, 4}, []int{7, 1023}
	}
	collectivetest.Run(t, newSplitWorld, opts)
}

func TestNewRejectsMismatchedTransports(t *testing.T) {
	w, err := inproc.NewWorld(3)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	eps := w.Endpoints()
	if _, err := route.New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
	if _, err := route.New([]transport.Endpoint{eps[0], nil, eps[0]}); err == nil {
		t.Error("a missing transport was accepted")
	}
	if _, err := route.New([]transport.Endpoint{eps[0], eps[1], eps[0]}); err == nil {
		t.Error("transports of two different ranks were accepted")
	}
	if _, err := route.New(eps[:2]); err == nil {
		t.Error("a 3-rank transport was accepted for 2 ranks")
	}
	if _, err := route.New([]transport.Endpoint{eps[0], plain{eps[0]}, eps[0]}); err == nil {
		t.Error("a transport without End was joined with another")
	}
}

// plain hides its endpoint's transport.Ender.
type plain struct{ transport.Endpoint }

// chunky is an in-process endpoint with a preferred chunk size.
type chunky struct {
	*inproc.Endpoint
	chunk int
}

func (c chunky) Traits() transport.Traits { return transport.Traits{ChunkBytes: c.chunk} }

// TestTraits checks what a routed endpoint reports: shared memory only if
// every joined transport has it, and the largest chunk size any prefers,
// so that it agrees with a rank that has the network transport alone.
func TestTraits(t *testing.T) {
	got := transport.TraitsOf(newSplitWorld(t, 4)[0])
	if got.SharedMemory || got.ChunkBytes != 0 {
		t.Fatalf("shm and inproc joined: traits %+v, want no shared memory and no chunk size", got)
	}
	near, err := inproc.NewWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	far, err := inproc.NewWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = near.Close(); _ = far.Close() })
	fast := chunky{far.Endpoints()[0].(*inproc.Endpoint), 2 << 20}
	ep, err := route.New([]transport.Endpoint{near.Endpoints()[0], fast})
	if err != nil {
		t.Fatal(err)
	}
	if got := ep.Traits(); got.SharedMemory || got.ChunkBytes != 2<<20 {
		t.Fatalf("inproc and a 2 MiB preference joined: traits %+v, want ChunkBytes %d", got, 2<<20)
	}
}

// A transport given in also joins the endpoint though no peer is reached
// through it: it counts in Traits and is closed with the others.
func TestAlsoJoined(t *testing.T) {
	near, err := inproc.NewWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	spare, err := inproc.NewWorld(2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = near.Close(); _ = spare.Close() })
	n0 := near.Endpoints()[0]
	if _, err := route.New([]transport.Endpoint{n0, n0}, spare.Endpoints()[1]); err == nil {
		t.Error("an extra transport of another rank was accepted")
	}
	extra := chunky{spare.Endpoints()[0].(*inproc.Endpoint), 1 << 20}
	ep, err := route.New([]transport.Endpoint{n0, n0}, nil, extra)
	if err != nil {
		t.Fatal(err)
	}
	if got := ep.Traits(); got.ChunkBytes != 1<<20 {
		t.Fatalf("traits %+v, want the extra transport's ChunkBytes %d", got, 1<<20)
	}
	if err := ep.Close(); err != nil {
		t.Fatal(err)
	}
	tag := transport.Tag{OpKey: transport.OpKey{Comm: 1, Op: 1}}
	if _, err := extra.Send(1, tag, []byte{1}).Wait(context.Background()); err == nil {
		t.Error("the extra transport still sends after the routed endpoint's Close")
	}
}

// A routed endpoint is a transport.Ender: its OnRemoteAbort hears the
// aborts that arrive through any joined transport, and End ends the
// operation on all of them.
func TestRemoteAbortHook(t *testing.T) {
	eps := newSplitWorld(t, 4) // ranks 0 and 1 share a host
	heard := make(chan *transport.RemoteAbortError, 4)
	en, ok := eps[0].(transport.Ender)
	if !ok {
		t.Fatal("a routed endpoint is no transport.Ender")
	}
	en.OnRemoteAbort(func(err *transport.RemoteAbortError) { heard <- err })
	ctx := context.Background()
	for i, from := range []int{1, 2} { // shared memory, then the other transport
		op := transport.OpKey{Comm: 7, Op: uint64(i + 1)}
		eps[from].Abort(op, []int{0}, errors.New("because"))
		select {
		case err := <-heard:
			if err.Rank != from || err.Op != op || err.Reason == "" {
				t.Fatalf("heard %+v, want rank %d's abort of %v", err, from, op)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("rank %d's abort was not heard", from)
		}
		// The operation ended on both transports of rank 0.
		for _, peer := range []int{1, 2} {
			if _, err := eps[0].Recv(peer, transport.Tag{OpKey: op}, nil).Wait(ctx); err == nil {
				t.Fatalf("a receive from rank %d of the aborted operation succeeded", peer)
			}
		}
	}
	op := transport.OpKey{Comm: 7, Op: 9}
	en.End(op, errors.New("ended here"))
	for _, peer := range []int{1, 2} {
		if _, err := eps[0].Send(peer, transport.Tag{OpKey: op}, []byte{1}).Wait(ctx); err == nil {
			t.Fatalf("a send to rank %d of the ended operation succeeded", peer)
		}
	}
}
