package metaroce_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocoll/gocoll/internal/scripttest"
	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// TestScripts runs the scenarios in testdata/*.txt; go test -run Scripts
// -update rewrites their expected output. Commands (nodes are named a, b,
// c, ...; sizes like 4MiB, times like 3ms, rates in Gbit/s):
//
//	nodes n=2 [paths=4] [datagram=9000] [capacity=10] [seed=1]
//	switch NAME gbps=10 delay=25us [queue=4MiB] [ecn=64KiB]
//	link a->b [paths=4] [first=0] gbps=10 delay=50us [queue=512KiB] [ecn=10KiB] [loss=1%] [via=NAME]
//	connect a->b
//	send a->b SIZE [msgs=1] [stream=1]
//	cut a->b path=2 at=3ms | restore a->b path=2 at=5ms
//	run 50ms        (prints completions per node, and every other event)
//	goodput a->b
//	stats a->b
func TestScripts(t *testing.T) {
	scripttest.WalkFiles(t, "testdata", func(t *testing.T, file string) {
		sc := &scenario{t: t}
		scripttest.RunFile(t, file, sc.handle)
	})
}

// scenario is the state of one script.
type scenario struct {
	t        *testing.T
	s        *sim
	switches map[string]simfabric.LinkID
	fwd      map[routeKey]simfabric.LinkID // forward link of (from, to, path)
	conns    map[[2]int]metaroce.ConnID    // (local, peer) -> connection at local
	nextMsg  map[[2]int]uint64
	logged   int
	mark     map[[2]int]sample // goodput: last (time, bytes) per connection
}

func node(t *testing.T, cmd *scripttest.Cmd, name string) int {
	if len(name) != 1 || name[0] < 'a' || name[0] > 'z' {
		cmd.Fatalf(t, "bad node %q", name)
	}
	return int(name[0] - 'a')
}

func nodeName(i int) string { return string(rune('a' + i)) }

// ends parses the positional "x->y".
func (sc *scenario) ends(cmd *scripttest.Cmd) (int, int) {
	pos := cmd.Positional()
	if len(pos) == 0 {
		cmd.Fatalf(sc.t, "want a->b")
	}
	from, to, ok := strings.Cut(pos[0], "->")
	if !ok {
		cmd.Fatalf(sc.t, "want a->b, got %q", pos[0])
	}
	return node(sc.t, cmd, from), node(sc.t, cmd, to)
}

func (sc *scenario) handle(t *testing.T, cmd *scripttest.Cmd) string {
	sc.t = t
	if cmd.Name != "nodes" && sc.s == nil {
		cmd.Fatalf(t, "nodes must come first")
	}
	switch cmd.Name {
	case "nodes":
		return sc.nodes(cmd)
	case "switch":
		return sc.addSwitch(cmd)
	case "link":
		return sc.link(cmd)
	case "connect":
		return sc.connect(cmd)
	case "send":
		return sc.send(cmd)
	case "cut", "restore":
		return sc.fault(cmd)
	case "run":
		return sc.run(cmd)
	case "goodput":
		return sc.goodput(cmd)
	case "stats":
		return sc.stats(cmd)
	}
	cmd.Fatalf(t, "unknown command %q", cmd.Name)
	return ""
}

func (sc *scenario) nodes(cmd *scripttest.Cmd) string {
	cfg := metaroce.Config{
		Paths:        cmd.IntOr(sc.t, "paths", 4),
		MaxDatagram:  cmd.IntOr(sc.t, "datagram", 9000),
		RecvCapacity: int64(cmd.FloatOr(sc.t, "capacity", 0) * 1e9 / 8),
	}
	n := cmd.Int(sc.t, "n")
	sc.s = newSim(sc.t, int64(cmd.IntOr(sc.t, "seed", 1)), n, cfg)
	sc.switches, sc.fwd = map[string]simfabric.LinkID{}, map[routeKey]simfabric.LinkID{}
	sc.conns, sc.nextMsg, sc.mark = map[[2]int]metaroce.ConnID{}, map[[2]int]uint64{}, map[[2]int]sample{}
	return fmt.Sprintf("%d nodes, %d paths each, %d-byte datagrams", n, cfg.Paths, cfg.MaxDatagram)
}

func (sc *scenario) linkConfig(cmd *scripttest.Cmd, defQueue int64) simfabric.LinkConfig {
	return simfabric.LinkConfig{
		Rate:              int64(cmd.Float(sc.t, "gbps") * 1e9 / 8),
		Delay:             cmd.Duration(sc.t, "delay"),
		QueueBytes:        int(cmd.SizeOr(sc.t, "queue", defQueue)),
		ECNThresholdBytes: int(cmd.SizeOr(sc.t, "ecn", 0)),
		Loss:              cmd.FloatOr(sc.t, "loss", 0),
	}
}

func (sc *scenario) addSwitch(cmd *scripttest.Cmd) string {
	pos := cmd.Positional()
	if len(pos) != 1 {
		cmd.Fatalf(sc.t, "want one switch name")
	}
	sc.switches[pos[0]] = sc.s.link(sc.linkConfig(cmd, 4<<20))
	return "ok"
}

// link adds paths between two nodes: a link of their own each way, and
// the forward direction also crosses the shared link via, if given.
func (sc *scenario) link(cmd *scripttest.Cmd) string {
	a, b := sc.ends(cmd)
	paths, first := cmd.IntOr(sc.t, "paths", 4), cmd.IntOr(sc.t, "first", 0)
	cfg := sc.linkConfig(cmd, 512<<10)
	via := cmd.ValueOr(sc.t, "via", "")
	for i := first; i < first+paths; i++ {
		l := sc.s.link(cfg)
		sc.fwd[routeKey{a, b, i}] = l
		if via != "" {
			sw, ok := sc.switches[via]
			if !ok {
				cmd.Fatalf(sc.t, "no switch %q", via)
			}
			sc.s.path(a, b, i, l, sw)
		} else {
			sc.s.path(a, b, i, l)
		}
		rev := simfabric.LinkConfig{Rate: cfg.Rate, Delay: cfg.Delay, QueueBytes: cfg.QueueBytes}
		if via != "" {
			rev.Delay *= 2
		}
		sc.s.path(b, a, i, sc.s.link(rev))
	}
	return fmt.Sprintf("paths %d..%d %s<->%s", first, first+paths-1, nodeName(a), nodeName(b))
}

func (sc *scenario) connect(cmd *scripttest.Cmd) string {
	a, b := sc.ends(cmd)
	ca, cb := sc.s.connect(a, b)
	sc.conns[[2]int{a, b}], sc.conns[[2]int{b, a}] = ca, cb
	sc.logged = len(sc.s.log)
	return fmt.Sprintf("%s->%s connected at %v", nodeName(a), nodeName(b), sc.s.fab.Now())
}

func (sc *scenario) conn(cmd *scripttest.Cmd, a, b int) metaroce.ConnID {
	c, ok := sc.conns[[2]int{a, b}]
	if !ok {
		cmd.Fatalf(sc.t, "%s and %s are not connected", nodeName(a), nodeName(b))
	}
	return c
}

// send posts the receives at b, then queues the messages at a.
func (sc *scenario) send(cmd *scripttest.Cmd) string {
	a, b := sc.ends(cmd)
	pos := cmd.Positional()
	if len(pos) != 2 {
		cmd.Fatalf(sc.t, "want a->b SIZE")
	}
	size, err := scripttest.ParseSize(pos[1])
	require.NoError(sc.t, err)
	msgs, stream := cmd.IntOr(sc.t, "msgs", 1), uint64(cmd.IntOr(sc.t, "stream", 1))
	ca, cb := sc.conn(cmd, a, b), sc.conn(cmd, b, a)
	now := sc.s.fab.Now()
	for range msgs {
		id := sc.nextMsg[[2]int{a, b}]
		sc.nextMsg[[2]int{a, b}]++
		require.NoError(sc.t, sc.s.eps[b].PostRecv(now, cb, stream, id, make([]byte, size)))
		require.NoError(sc.t, sc.s.eps[a].Send(now, ca, stream, id, fill(int(size), byte(id))))
	}
	return fmt.Sprintf("%d x %d bytes %s->%s queued at %v", msgs, size, nodeName(a), nodeName(b), now)
}

func (sc *scenario) fault(cmd *scripttest.Cmd) string {
	a, b := sc.ends(cmd)
	p := cmd.Int(sc.t, "path")
	l, ok := sc.fwd[routeKey{a, b, p}]
	if !ok {
		cmd.Fatalf(sc.t, "no path %d %s->%s", p, nodeName(a), nodeName(b))
	}
	kind := simfabric.Cut
	if cmd.Name == "restore" {
		kind = simfabric.Restore
	}
	at := cmd.Duration(sc.t, "at")
	require.NoError(sc.t, sc.s.fab.Schedule(simfabric.Fault{At: at, Link: l, Kind: kind}))
	return fmt.Sprintf("%s path %d %s->%s at %v", cmd.Name, p, nodeName(a), nodeName(b), at)
}

// run advances virtual time and prints the events that happened.
func (sc *scenario) run(cmd *scripttest.Cmd) string {
	pos := cmd.Positional()
	if len(pos) != 1 {
		cmd.Fatalf(sc.t, "want a duration")
	}
	d, err := scripttest.ParseDuration(pos[0])
	require.NoError(sc.t, err)
	sc.s.runTo(sc.s.fab.Now() + d)
	var b strings.Builder
	type tally struct {
		n, bytes int
		last     time.Duration
	}
	done := map[[2]int]*tally{} // (node, kind) -> completed messages
	var order [][2]int
	for _, e := range sc.s.log[sc.logged:] {
		k := [2]int{e.node, int(e.ev.Kind)}
		isDone := e.ev.Kind == metaroce.EventSendDone || e.ev.Kind == metaroce.EventRecvDone
		if !isDone || e.ev.Err != nil {
			fmt.Fprintf(&b, "%v %s %s\n", e.at, nodeName(e.node), describe(e.ev))
			continue
		}
		if done[k] == nil {
			done[k] = &tally{}
			order = append(order, k)
		}
		done[k].n++
		done[k].bytes += e.ev.N
		done[k].last = e.at
	}
	for _, k := range order {
		d := done[k]
		fmt.Fprintf(&b, "%s %v: %d messages, %d bytes, last at %v\n",
			nodeName(k[0]), metaroce.EventKind(k[1]), d.n, d.bytes, d.last)
	}
	sc.logged = len(sc.s.log)
	fmt.Fprintf(&b, "now %v", sc.s.fab.Now())
	return b.String()
}

func describe(ev metaroce.Event) string {
	switch ev.Kind {
	case metaroce.EventSendDone, metaroce.EventRecvDone:
		s := fmt.Sprintf("%v stream=%d msg=%d n=%d", ev.Kind, ev.Stream, ev.Msg, ev.N)
		if ev.Err != nil {
			s += " err=" + ev.Err.Error()
		}
		return s
	case metaroce.EventPathState:
		return fmt.Sprintf("path %d of peer %s is %v", ev.Path, nodeName(int(ev.Peer)), ev.State)
	}
	s := fmt.Sprintf("%v peer %s", ev.Kind, nodeName(int(ev.Peer)))
	if ev.Err != nil {
		s += " err=" + ev.Err.Error()
	}
	return s
}

// goodput prints the message bytes b received from a since the last
// goodput a->b (or since connect), as a rate.
func (sc *scenario) goodput(cmd *scripttest.Cmd) string {
	a, b := sc.ends(cmd)
	key := [2]int{a, b}
	now := sc.s.fab.Now()
	got := sc.s.arrived(b, sc.conn(cmd, b, a))
	last := sc.mark[key]
	sc.mark[key] = sample{now, got}
	rate := float64(got-last.bytes) / (now - last.at).Seconds()
	return fmt.Sprintf("%s->%s: %d bytes in %v = %s", nodeName(a), nodeName(b), got-last.bytes, now-last.at, gbps(rate))
}

// stats prints the sender's view of each path of a->b.
func (sc *scenario) stats(cmd *scripttest.Cmd) string {
	a, b := sc.ends(cmd)
	cs, ps := sc.s.pathStats(a, sc.conn(cmd, a, b))
	var out strings.Builder
	fmt.Fprintf(&out, "%s->%s: sent %d msgs, peer rate %s, retransmit queue %d\n",
		nodeName(a), nodeName(b), cs.MsgsSent, gbps(float64(cs.PeerRate)), cs.RetransmitQueue)
	for i, p := range ps {
		fmt.Fprintf(&out, "path %d: %-7v sent %5d lost %3d rtx %3d timeouts %d ecn %d cuts %d/%d/%d cwnd %d srtt %v\n",
			i, p.State, p.PacketsSent, p.PacketsLost, p.Retransmits, p.Timeouts, p.ECNEchoed,
			p.CutsECN, p.CutsLoss, p.CutsDelay, p.Cwnd, p.SRTT.Round(time.Microsecond))
	}
	return strings.TrimSuffix(out.String(), "\n")
}
