package metaroce

import "time"

// pace moves the pacing clock on by one datagram at the pacing rate
// (paceRate). Under the peer's target rate it allows a burst of two
// datagrams; under the windows' rate alone, of paceBurst at that rate, or
// of the paths' longest fabric RTT if shorter (paceSpan), so that pacing
// smooths only what an ACK clock at a long RTT, or one that a busy host
// reads late, would send in bursts (and never holds a datacenter path
// whose ACKs are read on time: its whole window goes out within its RTT).
// It returns the pacing rate (0: none) and whether the peer's target rate
// set it.
func (c *conn) pace(now time.Duration, size int) (float64, bool) {
	rate, peer := c.paceRate()
	if rate <= 0 {
		return 0, false
	}
	gap := time.Duration(float64(size) / rate * float64(time.Second))
	burst := 2 * gap
	if !peer {
		burst = max(burst, c.paceSpan())
	}
	c.paceAt = max(c.paceAt, now-burst) + gap
	return rate, peer
}

// Pacing gains over the windows' rate (cwnd/srtt): in slow start, twice,
// so that the window can double each round trip (as Linux paces); after
// it, a quarter more, so that the window, not the pacing, sets the rate.
const (
	paceGainSlowStart = 2.0
	paceGainAvoidance = 1.25
	// paceBurst is the longest burst pacing lets out at the windows' rate.
	// A pacing quantum (2 datagrams a release of the clock on long
	// connections, session 27's pace27) halved the lab sender's timer
	// runs, a sixth of its wake-ups (most come with ACKs), cut no CPU,
	// raised resends and failed TestIncastStaggered,
	// TestLateAcksTakeBackResends and TestRepickShortJobFindsLinks; 3
	// datagrams failed TestTCPShare (bench/results/cpu_lab/pace27.md).
	paceBurst = time.Millisecond
)

// paceRate returns the rate data is paced at in bytes/s (0: none) and
// whether the peer's target rate set it: the sum over the usable paths
// of cwnd/paceRTT times the path's gain, at most the peer's target rate.
func (c *conn) paceRate() (float64, bool) {
	rate := 0.0
	for _, p := range c.paths {
		if !p.usable() || p.rtt.srtt <= 0 {
			continue
		}
		gain := paceGainAvoidance
		if p.win.cwnd < p.win.ssthresh {
			gain = paceGainSlowStart
		}
		rate += gain * float64(p.win.cwnd) / p.paceRTT().Seconds()
	}
	if c.peerRate > 0 && (rate == 0 || float64(c.peerRate) < rate) {
		return float64(c.peerRate), true
	}
	return rate, false
}

// paceSpan is the longest burst, in time at the windows' rate, that pacing
// lets out: paceBurst, or, where a path's full RTT exceeds its fabric RTT
// (path.fab: its ACKs waited in a busy host's socket, which only arrival
// times show), the longest fabric RTT of the usable paths if shorter, so
// that a window released by a late read is spread over the loop instead of
// queueing in the fabric, where the delay signal would see a queue of the
// host's making. Without arrival times the two RTTs are one and it is
// paceBurst, as before.
func (c *conn) paceSpan() time.Duration {
	span, late := time.Duration(0), false
	for _, p := range c.paths {
		if p.usable() && p.fab.has {
			span = max(span, p.fab.srtt)
			late = late || p.rtt.srtt > p.fab.srtt
		}
	}
	if !late {
		return paceBurst
	}
	return min(span, paceBurst)
}

// paceRTT is the round trip a path's window is paced over: its smoothed
// RTT, or its latest sample where that is lower. When a queue the path
// shares with other connections drains (they ended their transfers), the
// smoothed RTT follows the round trip down over about eight samples,
// and pacing by it held the window to the rate it had behind the queue
// for that long: the window, not the pacing, then sets the rate at once,
// as paceGainAvoidance intends. In virtual time (mrtransport's
// TestWANSimTable: 4 connections of 8 paths exchanging 4 MiB each way over
// 4 shared WAN links, 8 seeds a run) the connections' share of the
// links' bound rose from 88.7-90.0 % to 91.6-92.4 % in three runs, the
// spread of their ends from 15-40 to 5-35 ms; the two-site lab's
// hierarchical AllReduce (TestWANSimHierarchical, 16 MiB, 6 seeds) from
// 91.6-92.1 to 92.7-93.0 % in two. The lab itself, whose CPU sets its
// figure, did not move (16 MiB 81.7 -> 81.0 %, 64 MiB 85.0 -> 85.1 %, 4
// interleaved rounds; bench/results/session34). A sample above the
// smoothed RTT changes nothing: a queue building up slows the rate
// through the window and the smoothed RTT as before.
func (p *path) paceRTT() time.Duration {
	if p.rtt.has && p.rtt.latest > 0 && p.rtt.latest < p.rtt.srtt {
		return p.rtt.latest
	}
	return p.rtt.srtt
}
