// Package simnet is a transport for simulating collectives in virtual time:
// ranks are goroutines of one process, messages are copied as inproc does,
// and each message takes the time an alpha-beta fabric says (latency plus
// bytes over bandwidth, per level of the topology: a rank's port on its
// host, its host's NIC, its site's uplink, each with tune.Link's lanes),
// with transfers that share a link queued on it: a transfer holds one lane
// of each link on its way (the resources collective/tune's model charges)
// for its bytes over that link's bandwidth, starts when all are free, and
// arrives its latency after the slowest. A version 2 topology's figures
// (per level, per pair of hosts) win over the ones given.
//
// The clock advances only when every rank is waiting: a rank waits in a
// request's Wait or Spin (collective's waits call Spin first), and the
// world then jumps to the next transfer's end. So a run's virtual times
// depend on the algorithm and the fabric, not on the machine. Transfers
// are placed on the links in a fixed order (start time, source,
// destination, tag), so the times do not depend on the goroutines'
// scheduling either, for ranks that each run in one goroutine; a rank
// that waits in two goroutines counts as waiting while either does.
//
// It is a simulator, not a transport for jobs: a send completes when its
// transfer ends (its receive must be posted), Abort ends the operation
// on the ranks it names at once, and a world whose ranks all wait for
// messages nobody sends stays stopped until the waits' contexts end.
package simnet

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gocoll/gocoll/collective/tune"
	"github.com/gocoll/gocoll/topology"
	"github.com/gocoll/gocoll/transport"
)

// World is a simulated fabric with one endpoint per rank of its topology.
type World struct {
	mu      sync.Mutex
	now     float64 // virtual seconds
	eps     []*Endpoint
	links   [3]tune.Link
	host    []int // per rank, dense host index
	site    []int
	pairs   map[[2]int]int // (host, host) either way -> index in pairLinks
	pair    []tune.Link
	opts    Options
	live    int         // endpoints not closed
	waiting int         // live endpoints with a goroutine waiting
	posted  []*transfer // sent since the last placement
	events  eventHeap
	lanes   map[[2]int][]float64 // (resource kind, index) -> each lane's free time
	bytes   int64                // moved so far
	calls   uint64               // transport calls, for AdvanceIdle
	moves   uint64               // transport calls but waits, and steps: see stillness
	// stuck is closed when the world stops with every live rank waiting
	// and nothing moving (advance), and then replaced.
	stuck chan struct{}
}

// Options adjust a World; the zero value moves every byte.
type Options struct {
	// Scale multiplies the length of every data message (Seq > 0; the
	// collectives' operation headers, Seq 0, count as they are) in its
	// timing: a run on buffers and a chunk size Scale times smaller takes
	// the time of the full-size run without holding its bytes. 0 means 1;
	// range [0, MaxScale].
	Scale int
	// NoPayload delivers data messages (Seq > 0) without their bytes: a
	// receive completes with the message's length and its buffer as it
	// was. Headers (Seq 0) are still copied, so the collectives' checks
	// work; the results are meaningless, the timing is not.
	NoPayload bool
}

// MaxScale bounds Options.Scale.
const MaxScale = 1 << 20

// NewWorld returns a world of t.Size() ranks on the fabric links
// describes (with the figures t.Links gives in place of links' own, as in
// collective/tune).
func NewWorld(t topology.Topology, links tune.Links) (*World, error) {
	return NewWorldWith(t, links, Options{})
}

// NewWorldWith is NewWorld with options.
func NewWorldWith(t topology.Topology, links tune.Links, opts Options) (*World, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("simnet: %w", err)
	}
	if opts.Scale < 0 || opts.Scale > MaxScale {
		return nil, fmt.Errorf("simnet: Options.Scale %d out of range [0, %d]", opts.Scale, MaxScale)
	}
	opts.Scale = max(1, opts.Scale)
	links = links.With(t)
	if _, err := tune.Predict(tune.AllReduce, tune.Input{Topology: t, ChunkBytes: 1, Links: links}); err != nil {
		return nil, fmt.Errorf("simnet: %w", err) // the link figures' checks
	}
	n := t.Size()
	w := &World{links: [3]tune.Link{links.Host, links.Site, links.WAN}, host: make([]int, n), site: make([]int, n),
		live: n, lanes: map[[2]int][]float64{}, opts: opts}
	hosts, sites := map[string]int{}, map[string]int{}
	for r := range n {
		ri, _ := t.Rank(r)
		w.host[r] = index(hosts, ri.Host)
		w.site[r] = index(sites, ri.SiteName())
		w.eps = append(w.eps, &Endpoint{w: w, rank: r, recvs: map[key][]*request{}, sends: map[key][]*transfer{},
			aborted: map[transport.OpKey]error{}})
	}
	for i, p := range links.Pairs {
		if w.pairs == nil {
			w.pairs = map[[2]int]int{}
		}
		a, b := hosts[p.A], hosts[p.B]
		w.pairs[[2]int{a, b}], w.pairs[[2]int{b, a}] = i, i
		w.pair = append(w.pair, p.Link)
	}
	return w, nil
}

func index(ids map[string]int, name string) int {
	if i, ok := ids[name]; ok {
		return i
	}
	ids[name] = len(ids)
	return ids[name]
}

// Endpoints returns the endpoints, by rank.
func (w *World) Endpoints() []transport.Endpoint {
	out := make([]transport.Endpoint, len(w.eps))
	for i, e := range w.eps {
		out[i] = e
	}
	return out
}

// Now is the virtual time since the world was made.
func (w *World) Now() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Duration(w.now * 1e9)
}

// Bytes is the payload moved so far.
func (w *World) Bytes() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bytes
}

// Close closes every endpoint.
func (w *World) Close() error {
	for _, e := range w.eps {
		_ = e.Close()
	}
	return nil
}

type key struct {
	src int
	tag transport.Tag
}

// transfer is a message on its way: its send, and once matched its
// receive. It leaves at its send's post time (the fabric holds what
// arrives before its receive is posted, as a network transport's
// unexpected-message queue does) and arrives at end.
type transfer struct {
	s, r    *request
	start   float64
	end     float64
	arrived bool
	data    []byte // a copy of the message, once it arrived unmatched
}

// advance is settle after a transport call that is not a wait (Send,
// Recv, Abort, Close): one of the world's moves.
func (w *World) advance() bool {
	w.moves++
	return w.settle()
}

// settle runs, with w.mu held, while every live rank waits: it places the
// matched transfers on the links and completes those that end first. It
// reports whether the world is stuck: every live rank waits and nothing
// moves, so that only a wait's end (its context, or a wake) can go on;
// the waits that began before then are told through w.stuck.
func (w *World) settle() bool {
	w.calls++
	for w.live > 0 && w.waiting == w.live && w.step() {
	}
	if w.live == 0 || w.waiting < w.live {
		return false
	}
	if w.stuck != nil {
		close(w.stuck)
		w.stuck = nil
	}
	return true
}

// stuckChan returns the channel closed when the world next gets stuck;
// the caller holds w.mu.
func (w *World) stuckChan() <-chan struct{} {
	if w.stuck == nil {
		w.stuck = make(chan struct{})
	}
	return w.stuck
}

// step completes the transfers that end first, and reports whether there
// were any.
func (w *World) step() bool {
	w.place()
	if len(w.events) == 0 {
		return false // nothing moves: a wait's context ends it
	}
	t := w.events[0].end
	w.now = max(w.now, t)
	w.moves++
	for len(w.events) > 0 && w.events[0].end <= t {
		w.finish(heap.Pop(&w.events).(*transfer))
	}
	return true
}

// AdvanceIdle lets time pass also when some ranks are not waiting but no
// rank has called the transport for d of real time, as when a rank's
// goroutine has finished without closing its endpoint (the collectives'
// table test runs each call in fresh goroutines). Virtual times then
// depend on the machine; a simulation whose ranks close their endpoints
// when done does not need it. It runs until every endpoint is closed.
func (w *World) AdvanceIdle(d time.Duration) {
	go func() {
		var last uint64
		for {
			time.Sleep(d)
			w.mu.Lock()
			if w.live == 0 {
				w.mu.Unlock()
				return
			}
			if w.calls == last && w.waiting > 0 {
				w.step()
			}
			last = w.calls
			w.mu.Unlock()
		}
	}()
}

// place puts the transfers sent since the last call on the links, in an
// order that does not depend on which goroutine sent first.
func (w *World) place() {
	slices.SortFunc(w.posted, func(a, b *transfer) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.s.ep.rank, b.s.ep.rank),
			cmp.Compare(a.s.peer, b.s.peer), cmp.Compare(a.s.tag.Comm, b.s.tag.Comm),
			cmp.Compare(a.s.tag.Op, b.s.tag.Op), cmp.Compare(a.s.tag.Seq, b.s.tag.Seq))
	})
	type use struct {
		res  [2]int // (resource kind, index), as collective/tune's model names them
		busy float64
	}
	var uses []use
	for _, tr := range w.posted {
		src, dst := tr.s.ep.rank, tr.s.peer
		size := float64(len(tr.s.buf))
		if tr.s.tag.Seq > 0 {
			size *= float64(w.opts.Scale)
		}
		uses = uses[:0]
		on := func(kind, idx int, l tune.Link) {
			uses = append(uses, use{res: [2]int{kind, idx}, busy: size / l.Bandwidth})
			lanes := w.lanes[[2]int{kind, idx}]
			if lanes == nil {
				lanes = make([]float64, max(1, l.Lanes))
				w.lanes[[2]int{kind, idx}] = lanes
			}
		}
		lat := w.links[0].Latency
		switch {
		case w.host[src] == w.host[dst]:
			on(0, src, w.links[0])
			on(1, dst, w.links[0])
		default:
			lat = w.links[1].Latency
			if w.site[src] != w.site[dst] {
				lat = w.links[2].Latency
				on(4, w.site[src], w.links[2])
				on(5, w.site[dst], w.links[2])
			}
			on(2, w.host[src], w.links[1])
			on(3, w.host[dst], w.links[1])
			conn := w.links[1]
			if w.site[src] != w.site[dst] {
				conn = w.links[2]
			}
			if i, ok := w.pairs[[2]int{w.host[src], w.host[dst]}]; ok {
				lat, conn = w.pair[i].Latency, w.pair[i]
				kind := 6
				if w.host[src] > w.host[dst] {
					kind = 7
				}
				on(kind, i, w.pair[i])
			}
			conn.Lanes = 1 // one transfer at a time between two ranks
			on(8, src*len(w.eps)+dst, conn)
		}
		// Each link queues the transfer on its lane that frees first and
		// holds it for the transfer's bytes over its own bandwidth; the
		// transfer arrives a latency after the last link is done with it.
		done := tr.start
		for _, u := range uses {
			lanes := w.lanes[u.res]
			lane := 0
			for j, free := range lanes {
				if free < lanes[lane] {
					lane = j
				}
			}
			lanes[lane] = max(tr.start, lanes[lane]) + u.busy
			done = max(done, lanes[lane])
		}
		tr.end = done + lat.Seconds()
		heap.Push(&w.events, tr)
	}
	w.posted = w.posted[:0]
}

// finish is a transfer's arrival: its send completes, and its receive if
// posted; else the fabric keeps a copy for the receive to come.
func (w *World) finish(tr *transfer) {
	tr.arrived = true
	s := tr.s
	if s.settled() { // cancelled or aborted on the way: nothing arrives
		if tr.r != nil {
			tr.r.complete(0, errors.New("simnet: the sender withdrew the message"))
		}
		w.eps[s.peer].drop(tr)
		return
	}
	if tr.r == nil {
		if w.eps[s.peer].aborted[s.tag.OpKey] != nil || w.eps[s.peer].closed {
			w.eps[s.peer].drop(tr)
		} else {
			tr.data = s.buf[:len(s.buf):len(s.buf)] // NoPayload: the length is what counts
			if !w.opts.NoPayload || s.tag.Seq == 0 {
				tr.data = append([]byte(nil), s.buf...)
			}
		}
		s.complete(len(s.buf), nil)
		return
	}
	w.deliver(tr, s.buf)
	s.complete(len(s.buf), nil)
}

// deliver copies an arrived message into its receive and completes it.
func (w *World) deliver(tr *transfer, msg []byte) {
	r := tr.r
	if r.settled() {
		return
	}
	if len(msg) > len(r.buf) {
		r.complete(0, fmt.Errorf("simnet: %d-byte message into %d-byte buffer: %w", len(msg), len(r.buf), transport.ErrTruncated))
		return
	}
	if !w.opts.NoPayload || tr.s.tag.Seq == 0 {
		copy(r.buf, msg)
	}
	w.bytes += int64(len(msg))
	r.complete(len(msg), nil)
}

type eventHeap []*transfer

func (h eventHeap) Len() int           { return len(h) }
func (h eventHeap) Less(i, j int) bool { return h[i].end < h[j].end }
func (h eventHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)        { *h = append(*h, x.(*transfer)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
