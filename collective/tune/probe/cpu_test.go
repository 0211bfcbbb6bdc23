package probe

import (
	"math"
	"testing"
	"time"
)

// cpuCosts fits a message's CPU and the waiting rate to the ping-pongs and
// the bursts: 30 µs a message and a quarter of a core while waiting, over
// 10 round trips of 4 ms and 3 bursts of 5 ms, give back 30 µs; bursts as
// slow a message as the ping-pongs give no figure where the ping-pongs
// mostly waited, and theirs where they kept both ends busy; delayed
// ping-pongs (the same messages, longer trips) tell the two apart there.
// A byte's CPU is the bulk's less a round trip's each.
func TestCPUCosts(t *testing.T) {
	const msg, wait = 30e-6, 0.25
	r := cpuRuns{pings: 10, pingTook: 0.040, burstTook: 0.015, bulkBytes: 1 << 20}
	r.ping = 20*msg + wait*r.pingTook
	r.burst = burstRuns*(burstLen+1)*msg + wait*r.burstTook
	trip := r.ping / 10
	r.bulk = bulkRuns*trip + bulkRuns*float64(r.bulkBytes)*2e-9
	perMsg, perByte := cpuCosts(r)
	if perMsg != 30*time.Microsecond {
		t.Errorf("a message %v, want 30µs", perMsg)
	}
	if perByte < 1.999e-9 || perByte > 2.001e-9 {
		t.Errorf("a byte %.4g s, want 2e-9", perByte)
	}
	r.burstTook = r.pingTook * burstRuns * (burstLen + 1) / 20 // as slow a message
	if perMsg, _ := cpuCosts(r); perMsg != 0 {
		t.Errorf("bursts as slow as ping-pongs, mostly waiting: a message %v, want 0 (unknown)", perMsg)
	}
	// A short link, its ping-pongs' ends busy (CPU 0.9 of their time):
	// the message's CPU is the ping-pongs' a message.
	r.ping = 0.9 * 2 * r.pingTook
	if perMsg, _ := cpuCosts(r); perMsg != time.Duration(r.ping/20*1e9) {
		t.Errorf("busy ping-pongs: a message %v, want %v", perMsg, time.Duration(r.ping/20*1e9))
	}
	// The delayed ping-pongs: each trip 1 ms longer, p[0]'s CPU (half of
	// each message, half of the pair's waiting, which runs all the time)
	// only the waiting's more; they give the waiting rate and so the
	// message's CPU, where the bursts could not (ping-pongs not busy).
	r.ping, r.ping0 = 20*msg+wait*r.pingTook, 10*msg+wait/2*r.pingTook
	r.delayedTook = delayedPings * (r.pingTook/10 + 1e-3)
	r.delayed = delayedPings * (msg + wait/2*r.delayedTook/delayedPings)
	if perMsg, _ := cpuCosts(r); perMsg != 30*time.Microsecond {
		t.Errorf("delayed ping-pongs: a message %v, want 30µs", perMsg)
	}
	// A process that burns the same share of a core whatever it does: its
	// CPU is all waiting, the message's none.
	r.ping, r.ping0, r.delayed = wait*r.pingTook, wait/2*r.pingTook, wait/2*r.delayedTook
	if perMsg, _ := cpuCosts(r); perMsg != 0 {
		t.Errorf("delayed ping-pongs, CPU all waiting: a message %v, want 0", perMsg)
	}
	// Delayed trips not 5/4 as long as the ping-pongs' (a loaded machine
	// whose trips took longer than the delay): no figure from them.
	r.ping, r.ping0, r.delayedTook = 20*msg+wait*r.pingTook, 10*msg+wait/2*r.pingTook, delayedPings*r.pingTook/10*1.2
	r.delayed = delayedPings * (msg + wait/2*r.delayedTook/delayedPings)
	if perMsg, _ := cpuCosts(r); perMsg != 0 {
		t.Errorf("delayed trips barely longer: a message %v, want 0 (unknown)", perMsg)
	}
	if perMsg, perByte := cpuCosts(cpuRuns{pings: 1, bulkBytes: 1}); perMsg != 0 || perByte != 0 {
		t.Errorf("nothing measured: %v, %v", perMsg, perByte)
	}
}

// TestCPUCostsDelayedPerWaiter: the delayed ping-pongs' answer is held by
// p[1]'s sleep, so through the delay only p[0] waits in the transport
// (review B14 L4). Where the waiting's CPU is a waiter's own (a receive's
// spin), p[1] spends none of it during the delay: the fit must still give
// TestCPUCosts's 30 µs a message (a quarter of a core of waiting for the
// pair, half on each end, over a ping-pong; the bursts as slow a message
// as the ping-pongs), as it does where the waiting runs all the time
// (TestCPUCosts).
func TestCPUCostsDelayedPerWaiter(t *testing.T) {
	const msg, wait = 30e-6, 0.25
	r := cpuRuns{pings: 10, pingTook: 0.040, bulkBytes: 1 << 20}
	r.ping, r.ping0 = 20*msg+wait*r.pingTook, 10*msg+wait/2*r.pingTook
	r.burstTook = r.pingTook * burstRuns * (burstLen + 1) / 20 // bursts as slow a message
	r.burst = burstRuns*(burstLen+1)*msg + wait*r.burstTook
	r.bulk = bulkRuns * r.ping / 10
	trip := r.pingTook / 10
	r.delayedTook = delayedPings * (trip + 1e-3)
	// p[0] a trip: its half of the two messages, its waiting over the
	// trip and over the delay.
	r.delayed = delayedPings * (msg + wait/2*trip + wait/2*1e-3)
	if perMsg, _ := cpuCosts(r); perMsg != 30*time.Microsecond {
		t.Errorf("waiting per waiter: a message %v, want 30µs", perMsg)
	}
}

// contendedFigures: on a multipath level, a round that carried more than
// the lone transfers gives the level its rate, however much more (a lone
// connection on 3 or 2 of 4 links: 70 or 50 against the round's 90 or
// 100; the links' total 200); less leaves the lone transfers'. Elsewhere
// (a connection is one path) the lone transfers' rate stands. A byte's
// CPU is the round's less a round trip's each pair, and unknown where a
// rank's CPU is.
func TestContendedFigures(t *testing.T) {
	const rtt, trip = 0.004, 0.001
	for _, c := range []struct {
		name                string
		took, cpu, single   float64
		multipath           bool
		wantBW, wantPerByte float64
	}{
		{"undershot, multipath", 4<<20/90e6 + rtt, 0.1 + 4*trip, 70e6, true, 90e6, 0.1 / (4 << 20)},
		{"undershot, one path", 4<<20/90e6 + rtt, 0.1 + 4*trip, 70e6, false, 70e6, 0.1 / (4 << 20)},
		{"half the links, multipath", 4<<20/100e6 + rtt, 0.1 + 4*trip, 50e6, true, 100e6, 0.1 / (4 << 20)},
		{"half the links, one path", 4<<20/100e6 + rtt, 0.1 + 4*trip, 50e6, false, 50e6, 0.1 / (4 << 20)},
		{"links' total, multipath", 4<<20/200e6 + rtt, 0.1 + 4*trip, 70e6, true, 200e6, 0.1 / (4 << 20)},
		{"lanes, one path", 4<<20/200e6 + rtt, 0.1 + 4*trip, 70e6, false, 70e6, 0.1 / (4 << 20)},
		{"slower, multipath", 4<<20/50e6 + rtt, 0.1 + 4*trip, 70e6, true, 70e6, 0.1 / (4 << 20)},
		{"no CPU", 4<<20/90e6 + rtt, -1, 70e6, true, 90e6, 0},
		{"no round", 0, -1, 70e6, true, 70e6, 0},
	} {
		bw, perByte := contendedFigures(4, 4, 1<<20, c.took, c.cpu, rtt, trip, c.single, c.multipath)
		if math.Abs(bw/c.wantBW-1) > 1e-9 || math.Abs(perByte-c.wantPerByte) > 1e-15 {
			t.Errorf("%s: %.4g B/s, %.4g s a byte; want %.4g, %.4g", c.name, bw, perByte, c.wantBW, c.wantPerByte)
		}
	}
}

// A multipath level's contended round carries contendSpread bulk
// transfers through its busiest link (each pair at most one), other
// levels' one; at least 4 KiB a pair.
func TestContendBytes(t *testing.T) {
	for _, c := range []struct {
		bulk, k   int
		multipath bool
		want      int
	}{
		{4 << 20, 4, false, 1 << 20},
		{4 << 20, 4, true, 4 << 20},
		{4 << 20, 1, false, 1 << 20},
		{4 << 20, 1, true, 4 << 20},
		{4 << 20, 16, false, 256 << 10},
		{4 << 20, 16, true, 1 << 20},
		{4 << 20, 4096, true, 4 << 10},
	} {
		if got := contendBytes(c.bulk, c.k, c.multipath); got != c.want {
			t.Errorf("contendBytes(%d, %d, %v) = %d, want %d", c.bulk, c.k, c.multipath, got, c.want)
		}
	}
}

// A level's busy latency is half its pairs' lower median busy round trip:
// one pair's stall (14 ms against 0.1-0.2 ms) does not make it; pairs that
// measured nothing (0) do not count; none gives 0.
func TestBusyLatency(t *testing.T) {
	for _, c := range []struct {
		rtts []float64
		want time.Duration
	}{
		{[]float64{200e-6, 100e-6, 14e-3, 120e-6}, 60 * time.Microsecond},
		{[]float64{0, 300e-6, 0, 0}, 150 * time.Microsecond},
		{[]float64{4.2e-3, 4.4e-3}, 2100 * time.Microsecond},
		{[]float64{0, 0}, 0},
		{nil, 0},
	} {
		if got := busyLatency(c.rtts); got != c.want {
			t.Errorf("busyLatency(%v) = %v, want %v", c.rtts, got, c.want)
		}
	}
}

// coldLatency is the median delayed trip less the hot one way, at least
// the hot one way; none without trips.
func TestColdLatencyFigure(t *testing.T) {
	for _, c := range []struct {
		trips     []float64
		hot, want float64
	}{
		{nil, 5e-6, 0},
		{[]float64{90e-6, 60e-6, 70e-6}, 5e-6, 65e-6},
		{[]float64{4e-6, 6e-6, 8e-6}, 5e-6, 5e-6}, // never under the hot figure
		{[]float64{4.3e-3, 4.4e-3, 9e-3, 4.2e-3}, 2.15e-3, 2.25e-3},
	} {
		if got := coldLatency(c.trips, c.hot); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("coldLatency(%v, %g) = %g, want %g", c.trips, c.hot, got, c.want)
		}
	}
}
