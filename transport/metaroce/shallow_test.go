package metaroce_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// The shallow-queue figures run the lab's buffers: a link queues 20 ms of
// its rate (500 000 bytes at 200 Mbit/s), as bench/lab.sh's tbf does, far
// less than the bandwidth-delay product at 25 and 50 ms one way.
const shallowQueue = 20 * time.Millisecond

// queueOf returns the bytes a link of rate bytes/s drains in d.
func queueOf(rate int64, d time.Duration) int {
	return int(float64(rate) * d.Seconds())
}

// flow keeps a window of messages of one size in flight from node a to
// node b on one connection, each receive posted before its send, checking
// each message as it arrives (as pump, for any pair of nodes).
type flow struct {
	s          *sim
	a, b       int
	ca, cb     metaroce.ConnID
	srcs, bufs [][]byte
	rounds     []uint64
	done       int
}

const flowStream = 78

func startFlow(s *sim, a, b int, ca, cb metaroce.ConnID, size, window int) *flow {
	f := &flow{s: s, a: a, b: b, ca: ca, cb: cb, rounds: make([]uint64, window)}
	for i := range window {
		f.srcs = append(f.srcs, fill(size, byte(i+a)))
		f.bufs = append(f.bufs, make([]byte, size))
		f.post(s.fab.Now(), i)
	}
	prev := s.onEvent
	s.onEvent = func(node int, at time.Duration, ev metaroce.Event) {
		if prev != nil {
			prev(node, at, ev)
		}
		if node != b || ev.Conn != cb || ev.Kind != metaroce.EventRecvDone || ev.Stream != flowStream {
			return
		}
		require.NoError(s.t, ev.Err, "seed %d", s.seed)
		slot := int(ev.Msg % uint64(window))
		require.True(s.t, string(f.srcs[slot]) == string(f.bufs[slot]), "message %d damaged (seed %d)", ev.Msg, s.seed)
		f.done++
		clear(f.bufs[slot])
		f.post(at, slot)
	}
	return f
}

func (f *flow) post(now time.Duration, slot int) {
	id := f.rounds[slot]*uint64(len(f.srcs)) + uint64(slot)
	f.rounds[slot]++
	require.NoError(f.s.t, f.s.eps[f.b].PostRecv(now, f.cb, flowStream, id, f.bufs[slot]))
	require.NoError(f.s.t, f.s.eps[f.a].Send(now, f.ca, flowStream, id, f.srcs[slot]))
}

// pathSummary sums a connection's path counters and lists each path's
// cuts (loss/delay/ECN), resends, timeouts and window.
func pathSummary(ps []metaroce.PathStats) (resends, timeouts int64, perPath string) {
	var b strings.Builder
	for i, p := range ps {
		resends += p.Retransmits
		timeouts += p.Timeouts
		fmt.Fprintf(&b, " p%d[cuts %d/%d/%d rtx %d to %d cwnd %dK srtt %v]", i, p.CutsLoss, p.CutsDelay, p.CutsECN,
			p.Retransmits, p.Timeouts, p.Cwnd>>10, p.SRTT.Round(100*time.Microsecond))
	}
	return resends, timeouts, b.String()
}

// TestFigureShallowQueues prints one connection's goodput over 4 paths of
// 200 Mbit/s whose queues hold 20 ms of the rate, at 1, 2, 25 and 50 ms
// one way (also at MTU 1500, with 1 % loss, and over paths of 2 and 25
// ms together), as a share of capacity from 2 s to the end (slow start
// left out), with the links' tail drops and each path's cuts, resends
// and timeouts. Run with -v to see the table.
func TestFigureShallowQueues(t *testing.T) {
	ms := time.Millisecond
	type row struct {
		oneWay   []time.Duration
		loss     float64
		datagram int
		floor    float64
	}
	rows := []row{
		{[]time.Duration{1 * ms}, 0, 9000, 0.85},
		{[]time.Duration{2 * ms}, 0, 9000, 0.85},
		{[]time.Duration{25 * ms}, 0, 9000, 0.85},
		{[]time.Duration{50 * ms}, 0, 9000, 0.85},
		{[]time.Duration{25 * ms}, 0, 1452, 0.85},
		{[]time.Duration{50 * ms}, 0, 1452, 0.85},
		{[]time.Duration{2 * ms}, 0.01, 9000, 0.75},
		{[]time.Duration{25 * ms}, 0.01, 9000, 0.6},
		{[]time.Duration{2 * ms, 25 * ms}, 0, 9000, 0.85},
	}
	if testing.Short() {
		rows = rows[1:4]
	}
	for i, r := range rows {
		name := fmt.Sprintf("oneway=%v/loss=%g/datagram=%d", r.oneWay, r.loss, r.datagram)
		t.Run(name, func(t *testing.T) {
			seed := int64(1300 + i)
			// A budget above the bandwidth-delay product (10 MB at 50 ms), so
			// that the flow's messages, each posted as the last arrives and
			// granted a round trip later, are not held by the default 4 MiB
			// of credit: the figure is about the windows.
			s := newSim(t, seed, 2, metaroce.Config{Paths: 4, MaxDatagram: r.datagram, UnexpectedBytes: 64 << 20})
			cfgs := make([]simfabric.LinkConfig, 4)
			for k := range cfgs {
				cfgs[k] = simfabric.LinkConfig{Rate: labRate, Delay: r.oneWay[k%len(r.oneWay)],
					QueueBytes: queueOf(labRate, shallowQueue), Loss: r.loss}
			}
			links := s.wanPair(cfgs)
			ca, cb := s.connect(0, 1)
			t0 := s.fab.Now()
			runFor := 10 * time.Second
			startFlow(s, 0, 1, ca, cb, 1<<20, 32)
			s.runTo(t0 + 2*time.Second)
			from := s.arrived(1, cb)
			s.runTo(t0 + runFor)
			rate := float64(s.arrived(1, cb)-from) / (runFor - 2*time.Second).Seconds()
			whole := float64(s.arrived(1, cb)) / runFor.Seconds()
			var full, sent int64
			st := s.fab.Stats()
			for k := 0; k < len(links); k += 2 { // forward links
				full += st.Links[links[k]].DroppedQueueFull.Packets
				sent += st.Links[links[k]].Sent.Packets
			}
			_, ps := s.pathStats(0, ca)
			resends, timeouts, per := pathSummary(ps)
			capacity := 4.0 * labRate
			t.Logf("%-40s goodput %5.1f%% from 2 s (whole %5.1f%%); tail drops %d of %d (%.2f%%), resends %d, timeouts %d;%s",
				name, 100*rate/capacity, 100*whole/capacity, full, sent, 100*float64(full)/float64(max(sent, 1)), resends, timeouts, per)
			if rate/capacity < r.floor {
				t.Errorf("goodput %.1f%% of capacity, below %.0f%% (seed %d)", 100*rate/capacity, 100*r.floor, seed)
			}
		})
	}
}

// TestFigureIncastShallow runs the lab's incast: 6 senders, each to its
// own receiving endpoint (6 processes on one host, so no receiver sees
// the fan-in), all through one 400 Mbit/s link of 2 ms one way whose queue
// holds 20 ms of its rate, each connection with 8 paths (mrtransport's
// default) over it. It prints the total and each sender's goodput from
// 2 s to 10 s, Jain's index and the bottleneck's drops.
func TestFigureIncastShallow(t *testing.T) {
	const senders = 6
	const seed = 1400
	rate := int64(2 * labRate)
	cfg := metaroce.Config{Paths: 8, MaxDatagram: 9000}
	s := newSim(t, seed, 2*senders, cfg)
	bottleneck := s.link(simfabric.LinkConfig{Rate: rate, Delay: 2 * time.Millisecond, QueueBytes: queueOf(rate, shallowQueue)})
	type pair struct {
		ca, cb metaroce.ConnID
	}
	var pairs []pair
	for i := range senders {
		a, b := i, senders+i
		up := s.link(simfabric.LinkConfig{Rate: unitRate, QueueBytes: 4 << 20})
		for idx := range cfg.Paths {
			s.path(a, b, idx, up, bottleneck)
			s.path(b, a, idx, s.link(simfabric.LinkConfig{Rate: unitRate, Delay: 2 * time.Millisecond}))
		}
		ca, cb := s.connect(a, b)
		pairs = append(pairs, pair{ca, cb})
	}
	t0 := s.fab.Now()
	for i, p := range pairs {
		startFlow(s, i, senders+i, p.ca, p.cb, 1<<20, 16)
	}
	s.runTo(t0 + 2*time.Second)
	before := make([]int64, senders)
	for i, p := range pairs {
		before[i] = s.arrived(senders+i, p.cb)
	}
	st0 := s.fab.Stats().Links[bottleneck]
	s.runTo(t0 + 10*time.Second)
	st := s.fab.Stats().Links[bottleneck]
	rates := make([]float64, senders)
	total := 0.0
	var each []string
	var resends, timeouts int64
	for i, p := range pairs {
		rates[i] = float64(s.arrived(senders+i, p.cb)-before[i]) / 8
		total += rates[i]
		each = append(each, fmt.Sprintf("%.0f", rates[i]*8/1e6))
		_, ps := s.pathStats(i, p.ca)
		r, to, _ := pathSummary(ps)
		resends, timeouts = resends+r, timeouts+to
	}
	dropped := st.Dropped().Packets - st0.Dropped().Packets
	offered := st.Sent.Packets - st0.Sent.Packets
	drops := float64(dropped) / float64(max(offered, 1))
	_, ps := s.pathStats(0, pairs[0].ca)
	_, _, per := pathSummary(ps)
	t.Logf("incast %d->1 over %.0f Mbit/s, queue %v: total %.1f%% (%s Mbit/s), Jain %.3f, drops %.2f%% (%d of %d, 2-10 s), resends %d, timeouts %d; sender 0:%s",
		senders, float64(rate)*8/1e6, shallowQueue, 100*total/float64(rate), strings.Join(each, "/"), jain(rates), 100*drops,
		dropped, offered, resends, timeouts, per)
	if total < 0.9*float64(rate) || jain(rates) < 0.9 || drops >= 0.01 {
		t.Errorf("incast: total %.1f%% (want >= 90%%), Jain %.3f (want >= 0.9), drops %.2f%% (want < 1%%) (seed %d)",
			100*total/float64(rate), jain(rates), 100*drops, seed)
	}
}
