package probe

import (
	"math"
	"time"

	"github.com/gocoll/gocoll/topology"
)

// cpuRuns is a level's pair's CPU seconds, both ends together, over the
// ping-pongs (pings round trips of two messages, pingTook seconds), the
// bursts (burstRuns of burstLen messages and an answer, burstTook
// seconds) and the bulk transfers (bulkRuns of bulkBytes and an
// acknowledgement each); and p[0]'s alone, the end that waits through
// each delay, over the ping-pongs (ping0) and the delayed ping-pongs
// (delayedPings round trips, each answer held by p[1]'s sleep, delayedTook
// seconds; 0 if not run).
type cpuRuns struct {
	ping, burst, bulk, ping0, delayed float64
	pingTook, burstTook, delayedTook  float64
	pings, bulkBytes                  int
}

// cpuCosts derives a level's CPU figures from its pair's: the CPU of the
// ping-pongs and of the bursts is a message's CPU a time their messages
// plus a waiting rate w (the transport's timers and spins over a long
// link, the scheduler's) times their seconds; the two runs give both
// unknowns, where the bursts' messages took less time each than the
// ping-pongs' (at most 3/4). Else the delayed ping-pongs, as many
// messages a trip as the ping-pongs but a trip at least 5/4 as long, give
// p[0]'s waiting rate (its CPU a trip beyond its ping-pongs', over the
// extra seconds: p[0] waits through the delay, p[1] sleeps, so its rate
// is one end's whether the waiting is a waiter's own spin or runs all the
// time) and so the message's (a ping-pong's CPU a trip less both ends'
// waiting, over its two messages): on the lab's shared-memory and LAN
// levels the bursts were no faster a message than the ping-pongs, and
// their message's CPU stayed unknown in 34 of 36 measurements. Else, where
// the ping-pongs kept both ends busy (CPU at least 3/4 of their two ends'
// time: a short link, whose trip is the messages' CPU), the message's CPU
// is theirs a message; otherwise it stays unknown (0).
// A byte's CPU is the bulk transfers', less a ping-pong's round trip
// each, over their bytes. Each is clamped to topology's bounds.
func cpuCosts(r cpuRuns) (time.Duration, float64) {
	pingMsgs, burstMsgs := float64(2*max(1, r.pings)), float64(burstRuns*(burstLen+1))
	var perMsg float64
	switch {
	case r.pingTook > 0 && r.burstTook/burstMsgs <= 0.75*r.pingTook/pingMsgs:
		k := r.burstTook / r.pingTook
		perMsg = max(0, (r.burst-k*r.ping)/(burstMsgs-k*pingMsgs))
	case r.pingTook > 0 && r.delayedTook/delayedPings >= 1.25*r.pingTook*2/pingMsgs: // a trip's
		trip, cpu, cpu0 := r.pingTook*2/pingMsgs, r.ping*2/pingMsgs, r.ping0*2/pingMsgs
		wait0 := max(0, (r.delayed/delayedPings-cpu0)/(r.delayedTook/delayedPings-trip))
		perMsg = max(0, (cpu-2*wait0*trip)/2)
	case r.pingTook > 0 && r.ping >= 0.75*2*r.pingTook:
		perMsg = r.ping / pingMsgs
	}
	trip := max(0, r.ping) / float64(max(1, r.pings))
	perByte := max(0, r.bulk-bulkRuns*trip) / float64(bulkRuns*r.bulkBytes)
	perMsg = min(perMsg, topology.MaxCPUPerMessage.Seconds())
	return time.Duration(math.Round(perMsg * 1e9)), min(perByte, topology.MaxCPUPerByte)
}

// touchedBuffer returns n bytes whose every page has been written once.
// The probe's CPU figures price a transport's steady state, whose buffers
// are warm, but a fresh buffer's pages are mapped on first touch, which on
// a microVM costs the process about 10 us a 4 KiB page (2.3-2.4 ns a byte
// on session 35's Firecracker machine: more than a LAN byte's transport
// CPU, 1.4 ns), and the receiver's first bulk transfer took it: the lab's
// probe read 4.8 ns a byte within a site against the 1.4 that 8 s of
// traffic gives, and the cost model overpriced every call (bench/results/
// session35). Touching the buffer before the CPU is read keeps the fault
// out of the figures.
func touchedBuffer(n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; i += touchStride {
		b[i] = 1
	}
	return b
}

// touchStride is the smallest page size of the platforms Go runs on.
const touchStride = 4096
