package simfabric_test

import (
	"bytes"
	"fmt"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// world runs one MetaRoCE endpoint per fabric node. Endpoint i sits on
// fabric node i and has node id i; path index k between two nodes is
// a fabric path of its own in each direction.
type world struct {
	fab    *simfabric.Fabric
	eps    []*metaroce.Endpoint
	routes map[[3]int]simfabric.PathID // (from, to, path index) -> fabric path
	index  []int                       // fabric path -> path index
	events [][]metaroce.Event          // per node, every event polled so far
	buf    []byte
}

// connect adds one fabric path per link config from a to b and back; the
// reverse direction gets the same rate and delay but no faults.
func (w *world) connect(a, b int, cfgs ...simfabric.LinkConfig) []simfabric.LinkID {
	var fwd []simfabric.LinkID
	for k, cfg := range cfgs {
		p, l, _ := w.fab.Connect(simfabric.NodeID(a), simfabric.NodeID(b), cfg)
		q, _, _ := w.fab.Connect(simfabric.NodeID(b), simfabric.NodeID(a), simfabric.LinkConfig{Rate: cfg.Rate, Delay: cfg.Delay})
		w.routes[[3]int{a, b, k}], w.routes[[3]int{b, a, k}] = p, q
		w.index = append(w.index, k, k) // p and q are the two newest paths
		fwd = append(fwd, l)
	}
	return fwd
}

// flush moves everything endpoint n wants to send into the fabric, at the
// fabric's current time, and collects its events.
func (w *world) flush(n int) {
	now := w.fab.Now()
	for {
		tx, ok := w.eps[n].PollTransmit(now, w.buf)
		if !ok {
			break
		}
		_ = w.fab.Send(w.routes[[3]int{n, int(tx.Peer), tx.Path}], w.buf[:tx.N])
	}
	for {
		ev, ok := w.eps[n].PollEvent()
		if !ok {
			break
		}
		w.events[n] = append(w.events[n], ev)
	}
}

// runUntil is the driver loop: it advances to whichever comes first, the
// fabric's next packet or an endpoint's next timer, until done holds or
// the virtual time limit passes.
func (w *world) runUntil(limit time.Duration, done func() bool) bool {
	deliver := func(d simfabric.Delivery) {
		w.eps[d.To].HandleDatagram(d.At, w.index[d.Path], d.CE, d.Data)
		w.flush(int(d.To)) // answering from inside deliver is allowed
	}
	for i := range w.eps {
		w.flush(i)
	}
	for !done() {
		next, ok := w.fab.NextEventTime()
		for _, ep := range w.eps {
			if t, tok := ep.NextTimeout(); tok && (!ok || t < next) {
				next, ok = t, true
			}
		}
		if !ok || next > limit {
			return false
		}
		next = max(next, w.fab.Now()) // a timer already due runs now
		if err := w.fab.AdvanceTo(next, deliver); err != nil {
			return false
		}
		for i, ep := range w.eps {
			ep.HandleTimeout(next)
			w.flush(i)
		}
	}
	return true
}

// find returns the first event of a kind that node n has polled.
func (w *world) find(n int, kind metaroce.EventKind) (metaroce.Event, bool) {
	for _, ev := range w.events[n] {
		if ev.Kind == kind {
			return ev, true
		}
	}
	return metaroce.Event{}, false
}

// Example_metaroce drives two MetaRoCE endpoints over a fabric with two
// paths, one of which loses 2% of its packets and is cut after 2 ms, and
// moves a 16 MiB message from node 0 to node 1. The sender stops using
// the cut path and finishes over the other one.
func Example_metaroce() {
	fab, _ := simfabric.New(simfabric.Config{Seed: 1})
	w := &world{fab: fab, routes: map[[3]int]simfabric.PathID{}, events: make([][]metaroce.Event, 2), buf: make([]byte, 65536)}
	for i := range 2 {
		_, _ = fab.AddNode()
		ep, _ := metaroce.NewEndpoint(metaroce.Config{NodeID: uint64(i), IDSeed: uint64(i + 1), Paths: 2})
		w.eps = append(w.eps, ep)
	}
	links := w.connect(0, 1,
		simfabric.LinkConfig{Rate: 1_250_000_000, Delay: 10 * time.Microsecond},
		simfabric.LinkConfig{Rate: 1_250_000_000, Delay: 10 * time.Microsecond, Loss: 0.02})
	_ = fab.Schedule(simfabric.Fault{At: 2 * time.Millisecond, Link: links[1], Kind: simfabric.Cut})

	conn, _ := w.eps[0].Connect(fab.Now(), 1)
	accepted := func() bool { _, ok := w.find(1, metaroce.EventAccepted); return ok }
	fmt.Println("accepted:", w.runUntil(time.Second, accepted))
	peerConn := w.events[1][0].Conn

	msg := bytes.Repeat([]byte("gocoll!!"), 2<<20) // 16 MiB
	got := make([]byte, len(msg))
	_ = w.eps[1].PostRecv(fab.Now(), peerConn, 1, 1, got)
	_ = w.eps[0].Send(fab.Now(), conn, 1, 1, msg)
	received := func() bool { _, ok := w.find(1, metaroce.EventRecvDone); return ok }
	fmt.Println("received:", w.runUntil(time.Second, received), "intact:", bytes.Equal(got, msg))

	s := fab.Stats().Links[links[1]]
	fmt.Println("lossy path dropped packets to loss and to the cut:", s.DroppedLoss.Packets > 0, s.DroppedCut.Packets > 0)
	_, paths, _ := w.eps[0].ConnStats(conn, nil)
	fmt.Println("sender's view: path 0", paths[0].State, "path 1 still good:", paths[1].State == metaroce.PathGood)
	// Output:
	// accepted: true
	// received: true intact: true
	// lossy path dropped packets to loss and to the cut: true true
	// sender's view: path 0 good path 1 still good: false
}
