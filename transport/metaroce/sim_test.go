package metaroce_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// sim runs MetaRoCE endpoints over a simfabric network in virtual time.
// Node i of the fabric runs endpoint i, whose node id is i.
type sim struct {
	t     *testing.T
	seed  int64
	fab   *simfabric.Fabric
	eps   []*metaroce.Endpoint
	route map[routeKey]simfabric.PathID // (from, to, path index) -> fabric path
	index map[simfabric.PathID]int      // fabric path -> path index
	log   []timedEvent
	buf   []byte
	// onEvent, if set, sees every event as it is polled.
	onEvent func(node int, at time.Duration, ev metaroce.Event)
	// agents run nodes beyond the endpoints' (other traffic, such as a
	// TCP-like flow), by node; agentList holds each once, in the order
	// added, for their timers (a map's order would make runs differ).
	agents    map[int]simAgent
	agentList []simAgent
	// txTick, if set, lets the endpoints transmit only at its multiples,
	// all that is ready at once (a host's sender that wakes once a tick and
	// writes one batch, whose datagrams to one path leave as a GSO train):
	// with simfabric.LinkConfig.LossTrain, the lab's old loss of whole
	// trains.
	txTick time.Duration
	// rx, if set, is a reader that wakes at times of its choosing and only
	// then hands the endpoints what arrived (a busy host's scheduling),
	// with or without the arrival times (arrival_test.go).
	rx *lateReader
	// onTx, if set, sees every datagram an endpoint transmits, with the
	// number of the flush that polled it (the datagrams one flush polls
	// are what a driver writes in one batch).
	onTx    func(node int, flush int, tx metaroce.Transmit, b []byte)
	flushes int
	// frozen, if set, holds each node's end of a stall (sim.freeze,
	// freeze_test.go): until then the node's endpoint runs nothing (no
	// timer, no read, no send) as a process left unscheduled, and what
	// arrives for it waits in held, handed over with its arrival time
	// when it runs again.
	frozen map[int]time.Duration
	held   map[int][]simfabric.Delivery
}

// simAgent is a node's traffic other than an endpoint's: it gets the
// node's packets and its own timers.
type simAgent interface {
	deliver(d simfabric.Delivery)
	nextTimeout() (time.Duration, bool)
	timeout(now time.Duration)
}

type routeKey struct{ from, to, idx int }

type timedEvent struct {
	at   time.Duration
	node int
	ev   metaroce.Event
}

// newSim makes a fabric with n nodes, each running an endpoint with cfg.
// Any later failure of the test prints the seed.
func newSim(t *testing.T, seed int64, n int, cfg metaroce.Config) *sim {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("simulation seed: %d", seed)
		}
	})
	fab, err := simfabric.New(simfabric.Config{Seed: seed})
	require.NoError(t, err)
	s := &sim{t: t, seed: seed, fab: fab, route: map[routeKey]simfabric.PathID{},
		index: map[simfabric.PathID]int{}, buf: make([]byte, 65536)}
	for i := range n {
		_, err := fab.AddNode()
		require.NoError(t, err)
		c := cfg
		c.NodeID, c.IDSeed = uint64(i), uint64(seed)*1000+uint64(i)
		ep, err := metaroce.NewEndpoint(c)
		require.NoError(t, err)
		s.eps = append(s.eps, ep)
	}
	return s
}

// link adds a link and returns its id.
func (s *sim) link(cfg simfabric.LinkConfig) simfabric.LinkID {
	id, err := s.fab.AddLink(cfg)
	require.NoError(s.t, err)
	return id
}

// path registers a route for path index idx from one node to another.
func (s *sim) path(from, to, idx int, links ...simfabric.LinkID) {
	p, err := s.fab.AddPath(simfabric.NodeID(from), simfabric.NodeID(to), links...)
	require.NoError(s.t, err)
	s.route[routeKey{from, to, idx}] = p
	s.index[p] = idx
}

// pair gives nodes a and b one path per config, each over its own link in
// each direction; the reverse links copy the forward ones without faults.
// It returns the forward links.
func (s *sim) pair(a, b int, fwd ...simfabric.LinkConfig) []simfabric.LinkID {
	var links []simfabric.LinkID
	for i, cfg := range fwd {
		l := s.link(cfg)
		rev := simfabric.LinkConfig{Rate: cfg.Rate, Delay: cfg.Delay, QueueBytes: cfg.QueueBytes}
		s.path(a, b, i, l)
		s.path(b, a, i, s.link(rev))
		links = append(links, l)
	}
	return links
}

func (s *sim) flush(node int) {
	ep := s.eps[node]
	now := s.fab.Now()
	if now < s.frozen[node] {
		return
	}
	s.flushes++
	for s.txTick == 0 || now%s.txTick == 0 {
		tx, ok := ep.PollTransmit(now, s.buf)
		if !ok {
			break
		}
		if s.onTx != nil {
			s.onTx(node, s.flushes, tx, s.buf[:tx.N])
		}
		p, ok := s.route[routeKey{node, int(tx.Peer), tx.Path}]
		require.True(s.t, ok, "no route %d->%d path %d", node, tx.Peer, tx.Path)
		require.NoError(s.t, s.fab.Send(p, s.buf[:tx.N]))
	}
	for {
		ev, ok := ep.PollEvent()
		if !ok {
			break
		}
		s.log = append(s.log, timedEvent{now, node, ev})
		if s.onEvent != nil {
			s.onEvent(node, now, ev)
		}
	}
}

// runUntil advances virtual time until cond holds, failing the test if it
// does not by the absolute time limit.
func (s *sim) runUntil(limit time.Duration, cond func() bool) {
	s.t.Helper()
	if !s.advance(limit, cond) {
		s.t.Fatalf("not done by %v (seed %d)", limit, s.seed)
	}
}

// runTo advances virtual time to end.
func (s *sim) runTo(end time.Duration) { s.advance(end, func() bool { return false }) }

func (s *sim) advance(limit time.Duration, cond func() bool) bool {
	deliver := func(d simfabric.Delivery) {
		if a, ok := s.agents[int(d.To)]; ok {
			a.deliver(d)
			return
		}
		if s.rx != nil {
			s.rx.queue = append(s.rx.queue, d)
			return
		}
		if d.At < s.frozen[int(d.To)] {
			s.held[int(d.To)] = append(s.held[int(d.To)], d)
			return
		}
		s.eps[d.To].HandleDatagram(d.At, s.index[d.Path], d.CE, d.Data)
		s.flush(int(d.To))
	}
	for i := range s.eps {
		s.flush(i)
	}
	for !cond() {
		t, ok := s.fab.NextEventTime()
		for i, ep := range s.eps {
			et, eok := ep.NextTimeout()
			if f := s.frozen[i]; f > s.fab.Now() {
				et, eok = max(et, f), true // it runs again then
			}
			if s.txTick > 0 && eok && et <= s.fab.Now() {
				// Due now but handled: it waits to transmit, at the next tick.
				et = (s.fab.Now()/s.txTick + 1) * s.txTick
			}
			if eok && (!ok || et < t) {
				t, ok = et, true
			}
		}
		for _, a := range s.agentList {
			if et, eok := a.nextTimeout(); eok && (!ok || et < t) {
				t, ok = et, true
			}
		}
		if tick := s.txTick; tick > 0 {
			if et := (s.fab.Now()/tick + 1) * tick; !ok || et < t {
				t, ok = et, true
			}
		}
		if et, eok := s.rx.next(); eok && (!ok || et < t) {
			t, ok = et, true
		}
		if !ok || t > limit {
			_ = s.fab.AdvanceTo(max(limit, s.fab.Now()), deliver)
			return cond()
		}
		t = max(t, s.fab.Now())
		require.NoError(s.t, s.fab.AdvanceTo(t, deliver))
		s.rx.read(s, t)
		for i, ep := range s.eps {
			if t < s.frozen[i] {
				continue
			}
			s.thaw(i, t)
			if et, eok := ep.NextTimeout(); eok && et <= t {
				ep.HandleTimeout(t)
			}
			s.flush(i)
		}
		for _, a := range s.agentList {
			if et, eok := a.nextTimeout(); eok && et <= t {
				a.timeout(t)
			}
		}
	}
	return true
}

// connect opens a connection from a to b and returns both ends' ids.
func (s *sim) connect(a, b int) (metaroce.ConnID, metaroce.ConnID) {
	s.t.Helper()
	ca, err := s.eps[a].Connect(s.fab.Now(), uint64(b))
	require.NoError(s.t, err)
	var cb metaroce.ConnID
	start := len(s.log)
	s.runUntil(s.fab.Now()+10*time.Second, func() bool {
		up := false
		for _, e := range s.log[start:] {
			if e.node == b && e.ev.Kind == metaroce.EventAccepted && e.ev.Peer == uint64(a) {
				cb = e.ev.Conn
			}
			if e.node == a && e.ev.Kind == metaroce.EventConnected && e.ev.Conn == ca {
				up = true
			}
		}
		return up && cb != 0
	})
	return ca, cb
}

// find returns the first logged event on node matching kind, stream, msg.
func (s *sim) find(node int, kind metaroce.EventKind, stream, msg uint64) (timedEvent, bool) {
	for _, e := range s.log {
		if e.node == node && e.ev.Kind == kind && e.ev.Stream == stream && e.ev.Msg == msg {
			return e, true
		}
	}
	return timedEvent{}, false
}

// count returns how many logged events on node match kind, stream, msg.
func (s *sim) count(node int, kind metaroce.EventKind, stream, msg uint64) int {
	n := 0
	for _, e := range s.log {
		if e.node == node && e.ev.Kind == kind && e.ev.Stream == stream && e.ev.Msg == msg {
			n++
		}
	}
	return n
}

// pathStats returns the path stats of a connection.
func (s *sim) pathStats(node int, c metaroce.ConnID) (metaroce.ConnStats, []metaroce.PathStats) {
	cs, ps, ok := s.eps[node].ConnStats(c, nil)
	require.True(s.t, ok)
	return cs, ps
}

func fill(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// mbps formats a rate in bytes/s.
func gbps(bytesPerSec float64) string { return fmt.Sprintf("%.2f Gb/s", bytesPerSec*8/1e9) }

// pump keeps a window of messages of one size in flight from node 0 to
// node 1 on stream pumpStream, each receive posted before its send, for as
// long as the simulation runs, with window buffers reused (so a long run
// holds little memory); each message is checked whole as it arrives.
type pump struct {
	s          *sim
	ca, cb     metaroce.ConnID
	srcs, bufs [][]byte
	rounds     []uint64 // messages sent per slot
	done       int      // messages arrived and checked
}

const pumpStream = 77

func startPump(s *sim, ca, cb metaroce.ConnID, size, window int) *pump {
	p := &pump{s: s, ca: ca, cb: cb, rounds: make([]uint64, window)}
	for i := range window {
		p.srcs = append(p.srcs, fill(size, byte(i)))
		p.bufs = append(p.bufs, make([]byte, size))
		p.post(s.fab.Now(), i)
	}
	prev := s.onEvent
	s.onEvent = func(node int, at time.Duration, ev metaroce.Event) {
		if prev != nil {
			prev(node, at, ev)
		}
		if node != 1 || ev.Kind != metaroce.EventRecvDone || ev.Stream != pumpStream {
			return
		}
		require.NoError(s.t, ev.Err, "seed %d", s.seed)
		slot := int(ev.Msg % uint64(window))
		require.True(s.t, string(p.srcs[slot]) == string(p.bufs[slot]), "message %d damaged (seed %d)", ev.Msg, s.seed)
		p.done++
		clear(p.bufs[slot])
		p.post(at, slot)
	}
	return p
}

// post posts the receive and the send of the next message, in slot.
func (p *pump) post(now time.Duration, slot int) {
	id := p.rounds[slot]*uint64(len(p.srcs)) + uint64(slot) // id mod window is the slot
	p.rounds[slot]++
	require.NoError(p.s.t, p.s.eps[1].PostRecv(now, p.cb, pumpStream, id, p.bufs[slot]))
	require.NoError(p.s.t, p.s.eps[0].Send(now, p.ca, pumpStream, id, p.srcs[slot]))
}

// freeze stops node's endpoint from now until now+d (see sim.frozen).
func (s *sim) freeze(node int, d time.Duration) {
	if s.frozen == nil {
		s.frozen, s.held = map[int]time.Duration{}, map[int][]simfabric.Delivery{}
	}
	s.frozen[node] = s.fab.Now() + d
}

// thaw hands a node that runs again at now what arrived for it while it
// was stopped, with the arrival times, as a driver that reads its sockets
// before its late timers (mrtransport's drainBeforeTimers).
func (s *sim) thaw(node int, now time.Duration) {
	held := s.held[node]
	if len(held) == 0 {
		return
	}
	delete(s.held, node)
	for _, d := range held {
		s.eps[node].HandleDatagramAt(now, d.At, s.index[d.Path], d.CE, d.Data)
	}
	s.flush(node)
}
