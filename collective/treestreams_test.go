package collective

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/inproc"
)

// heldEndpoint holds this rank's sends to peer until open is closed: the
// request it returns completes once the held send, made then, has.
type heldEndpoint struct {
	transport.Endpoint
	peer int
	open <-chan struct{}
	ctx  context.Context
}

func (e *heldEndpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	if peer != e.peer {
		return e.Endpoint.Send(peer, tag, buf)
	}
	h := &heldRequest{done: make(chan struct{})}
	go func() {
		defer close(h.done)
		select {
		case <-e.open:
		case <-e.ctx.Done():
			h.err = e.ctx.Err()
			return
		}
		h.n, h.err = e.Endpoint.Send(peer, tag, buf).Wait(e.ctx)
	}()
	return h
}

type heldRequest struct {
	done chan struct{}
	n    int
	err  error
}

func (h *heldRequest) Wait(ctx context.Context) (int, error) {
	select {
	case <-h.done:
		return h.n, h.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (h *heldRequest) Done() <-chan struct{} { return h.done }
func (h *heldRequest) Cancel()               {}

// upCountEndpoint closes full once its rank has sent want data messages
// to peer (headers not counted).
type upCountEndpoint struct {
	transport.Endpoint
	peer, want int
	mu         sync.Mutex
	sent       int
	full       chan struct{}
}

func (e *upCountEndpoint) Send(peer int, tag transport.Tag, buf []byte) transport.Request {
	r := e.Endpoint.Send(peer, tag, buf)
	if peer == e.peer && tag.Seq != 0 {
		e.mu.Lock()
		if e.sent++; e.sent == e.want {
			close(e.full)
		}
		e.mu.Unlock()
	}
	return r
}

// TestTreeUpDoesNotWaitForDown: a tree AllReduce's way up does not wait
// for its way down. A leaf's parent holds everything it sends the leaf
// until the leaf has sent it every chunk of its part: the leaf's chunks go
// up all at once, as their data is there from the start, then the reduced
// chunks come down. Before, each tree ran its events in one canonical
// order, in which the leaf's receive of the first chunk coming down stands
// before its sends of the later chunks going up (a round trip to the root
// and back later in steps), so the leaf waited for the parent, which
// waited for the leaf, until the deadline (the 4 MiB tree of the two-site
// lab in virtual time lost a quarter of the WAN's time so: a rank above a
// leaf sent its later chunks only after its first came back down).
func TestTreeUpDoesNotWaitForDown(t *testing.T) {
	const n, chunk = 8, 4 << 10
	k := tune.TreeChunksMin
	count := 2 * k * chunk / 4 // two parts of k chunks (float32)
	w, err := inproc.NewWorld(n)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cfg := Config{AllReduce: AlgoTree, Channels: 1, ChunkBytes: chunk}
	probe, err := New(w.Endpoints()[0], 1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	trees := probe.trees(-1, 1)
	// A leaf of tree 0 at the greatest depth whose parent it meets in no
	// other tree, so that every message between the two is of tree 0.
	leaf, parent := -1, -1
	for x := range n {
		p := trees[0].parent[x]
		if p < 0 || len(trees[0].children[x]) > 0 || trees[1].parent[x] == p || trees[1].parent[p] == x {
			continue
		}
		if leaf < 0 || trees[0].depth[x] > trees[0].depth[leaf] {
			leaf, parent = x, p
		}
	}
	if leaf < 0 {
		t.Fatal("no leaf of tree 0 whose parent it meets only there")
	}
	if k <= trees[0].height[trees[0].root]+trees[0].depth[leaf] {
		t.Fatalf("%d chunks: the leaf's first chunk down comes before its last up in every order", k)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	full := make(chan struct{})
	comms := make([]*Comm, n)
	for r, ep := range w.Endpoints() {
		switch r {
		case leaf:
			ep = &upCountEndpoint{Endpoint: ep, peer: parent, want: k, full: full}
		case parent:
			ep = &heldEndpoint{Endpoint: ep, peer: leaf, open: full, ctx: ctx}
		}
		if comms[r], err = New(ep, 1, cfg); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Go(func() {
			x := make([]float32, count)
			for i := range x {
				x[i] = float32(r + i%5)
			}
			if errs[r] = AllReduce(ctx, c, x, x, Sum); errs[r] != nil {
				return
			}
			for i, v := range x {
				if want := float32(n*(n-1)/2 + n*(i%5)); v != want {
					t.Errorf("rank %d, element %d: %v, want %v", r, i, v, want)
					return
				}
			}
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("leaf %d, parent %d holding its sends to it: rank %d: %v", leaf, parent, r, err)
		}
	}
}
