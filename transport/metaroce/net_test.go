package metaroce

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// testNet is a tiny in-test network for two endpoints: every path has the
// same one-way delay, and a drop function may lose datagrams. It is enough
// for unit tests; the figure tests run over simfabric.
type testNet struct {
	t       *testing.T
	now     time.Duration
	eps     [2]*Endpoint
	delay   time.Duration
	flights []flight
	seq     int
	drop    func(from, path int, b []byte) bool
	// gather, if positive, polls with PollTransmitVec(gather) and joins
	// the parts; gathered counts the datagrams that came in parts.
	gather, gathered int
	// place, if set, delivers DATA through Placement and
	// HandleDatagramParts as a driver reading payloads into place would;
	// placed counts the datagrams whose payload went straight into place.
	place  bool
	placed int
	// classes, if not nil, counts the datagrams sent by wire type and
	// Transmit.Control.
	classes map[classKey]int
	events  [2][]Event
	// frozen[i], if after now, is when endpoint i runs again: until then
	// it handles nothing (its datagrams wait, its timers are late) and
	// sends nothing, as a process left unscheduled.
	frozen [2]time.Duration
	// heard[i] is when endpoint i was last handed a datagram.
	heard [2]time.Duration
	buf   []byte
	stuck int // steps without time moving
	steps int
}

// classKey is a datagram's wire type and whether it was polled as
// control.
type classKey struct {
	typ     wire.Type
	control bool
}

type flight struct {
	at       time.Duration
	seq      int
	to, path int
	data     []byte
}

func newTestNet(t *testing.T, cfg Config) *testNet {
	n := &testNet{t: t, delay: 10 * time.Microsecond, buf: make([]byte, 65536)}
	for i := range n.eps {
		c := cfg
		c.NodeID, c.IDSeed = uint64(i), uint64(100+i)
		ep, err := NewEndpoint(c)
		require.NoError(t, err)
		n.eps[i] = ep
	}
	return n
}

// connect opens a connection from endpoint 0 to 1 and returns both ids.
func (n *testNet) connect() (ConnID, ConnID) {
	a, err := n.eps[0].Connect(n.now, 1)
	require.NoError(n.t, err)
	n.runUntil(func() bool { return n.has(0, EventConnected) && n.has(1, EventAccepted) }, time.Second)
	var b ConnID
	for _, ev := range n.events[1] {
		if ev.Kind == EventAccepted {
			b = ev.Conn
		}
	}
	return a, b
}

func (n *testNet) has(ep int, kind EventKind) bool {
	return slices.ContainsFunc(n.events[ep], func(e Event) bool { return e.Kind == kind })
}

func (n *testNet) flush() {
	for i, ep := range n.eps {
		if n.now < n.frozen[i] {
			continue
		}
		for {
			tx, ok := ep.PollTransmitVec(n.now, n.buf, n.gather)
			if !ok {
				break
			}
			data := append([]byte(nil), n.buf[:tx.N]...)
			if tx.Payload != nil {
				n.gathered++
				data = append(append(data, tx.Payload...), n.buf[tx.N:tx.N+tx.Tail]...)
			}
			if n.classes != nil {
				n.classes[classKey{wire.Type(data[1]), tx.Control}]++
			}
			if n.drop != nil && n.drop(i, tx.Path, data) {
				continue
			}
			n.seq++
			n.flights = append(n.flights, flight{at: n.now + n.delay, seq: n.seq, to: 1 - i, path: tx.Path, data: data})
		}
		for {
			ev, ok := ep.PollEvent()
			if !ok {
				break
			}
			n.events[i] = append(n.events[i], ev)
		}
	}
}

// step advances to the next datagram arrival or timer and handles it.
func (n *testNet) step() bool {
	n.flush()
	next, ok := time.Duration(0), false
	for _, f := range n.flights {
		if at := n.arrival(f); !ok || at < next {
			next, ok = at, true
		}
	}
	for i, ep := range n.eps {
		if n.now < n.frozen[i] {
			if !ok || n.frozen[i] < next {
				next, ok = n.frozen[i], true
			}
			continue
		}
		if t, tok := ep.NextTimeout(); tok && (!ok || t < next) {
			next, ok = t, true
		}
	}
	if !ok {
		return false
	}
	if n.steps++; n.steps > 2_000_000 {
		n.t.Fatalf("more than 2M steps by %v: runaway", n.now)
	}
	if next <= n.now {
		n.stuck++
		if n.stuck > 10000 {
			n.t.Fatalf("livelock at %v: timers do not advance", n.now)
		}
	} else {
		n.stuck = 0
	}
	n.now = max(n.now, next)
	slices.SortFunc(n.flights, func(a, b flight) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.seq - b.seq
	})
	var due, kept []flight
	for _, f := range n.flights {
		if n.arrival(f) <= n.now {
			due = append(due, f)
		} else {
			kept = append(kept, f)
		}
	}
	n.flights = kept
	for _, f := range due { // in order; an answer joins the flights
		n.deliver(n.eps[f.to], f)
	}
	for i, ep := range n.eps {
		if n.now >= n.frozen[i] {
			ep.HandleTimeout(n.now)
		}
	}
	n.flush()
	return true
}

// arrival is when f is handled: when it arrives, or once its endpoint
// runs again.
func (n *testNet) arrival(f flight) time.Duration { return max(f.at, n.frozen[f.to]) }

// deliver hands f to ep: whole, or with place set the way a scatter read
// into the slice Placement gives would (head, as much of the payload as
// the datagram has, the rest).
func (n *testNet) deliver(ep *Endpoint, f flight) {
	n.heard[f.to] = n.now
	if !n.place || len(f.data) < wire.DataHeadLen {
		ep.HandleDatagram(n.now, f.path, false, f.data)
		n.refusals(ep, f)
		return
	}
	head, rest := f.data[:wire.DataHeadLen], f.data[wire.DataHeadLen:]
	dst := ep.Placement(f.path, head)
	if dst == nil {
		ep.HandleDatagram(n.now, f.path, false, f.data)
		n.refusals(ep, f)
		return
	}
	k := copy(dst, rest)
	n.placed++
	ep.HandleDatagramParts(n.now, f.path, false, head, dst[:k], rest[k:])
}

// refusals sends ep's answers to the datagram f just delivered back to
// its sender.
func (n *testNet) refusals(ep *Endpoint, f flight) {
	for {
		tx, ok := ep.PollRefusal(n.buf)
		if !ok {
			return
		}
		n.seq++
		n.flights = append(n.flights, flight{at: n.now + n.delay, seq: n.seq, to: 1 - f.to, path: tx.Path, data: append([]byte(nil), n.buf[:tx.N]...)})
	}
}

func (n *testNet) runUntil(cond func() bool, limit time.Duration) {
	n.t.Helper()
	end := n.now + limit
	for !cond() {
		if n.now > end || !n.step() {
			n.t.Fatalf("condition not met by %v (now %v)", end, n.now)
		}
	}
}

func (n *testNet) runFor(d time.Duration) {
	end := n.now + d
	for n.now < end && n.step() {
	}
}

// done returns the completion event of (stream, msg) on endpoint ep.
func (n *testNet) done(ep int, kind EventKind, stream, msg uint64) (Event, bool) {
	for _, e := range n.events[ep] {
		if e.Kind == kind && e.Stream == stream && e.Msg == msg {
			return e, true
		}
	}
	return Event{}, false
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ seed ^ byte(i>>9)
	}
	return b
}

func (n *testNet) String() string { return fmt.Sprintf("testNet@%v", n.now) }
