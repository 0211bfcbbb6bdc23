package metaroce

import "time"

// ACK coalescing on long paths. Across a WAN the receiver's ACK clock sets
// the sender's pace of system calls and wake-ups: with an ACK per one or
// two DATA packets (Config.AckEvery, within Config.AckDelay) each ACK
// frees about one datagram of window, which the sender sends at once, and
// each arrival also wakes the receiver's timer for its delayed ACK. On a
// connection whose round trip is at least longAckRTT the receiver instead
// holds an ACK for up to ackHold of the round trip and acknowledges at once
// only after longAckEvery new packets over all its paths (one ACK reports
// every path), so that one ACK opens the window on every path at once.
// The exceptions stay immediate: a gap (loss or reordering), a duplicate,
// a message's last piece and a control piece.
//
// Since one ACK then reports the paths' arrivals together, it goes back on
// a path whose arrivals have about the least one-way delay (ackPathFor),
// not on whichever path the newest arrival took: on paths of 2 and 20 ms,
// an ACK of the 2 ms path's packets that took the 20 ms path back came
// 9 ms late, and the sender's timeouts fired (TestFigureGoodputByRTT's
// mixed row: 71 timeouts, 71 % of capacity). A path with no recent
// arrival takes none, so a path cut both ways does not swallow them.
//
// The sender expects the same hold: its retransmission timeout and the
// window it allows under the peer's target rate both include ackHold of the
// path's base RTT, and the RTT samples subtract the hold the receiver
// reports (wire.AckBlock.Delay), so delay signals are unchanged.
const (
	// longAckRTT is the least RTT at which ACKs are coalesced; below it
	// Config.AckEvery and Config.AckDelay apply unchanged.
	longAckRTT = time.Millisecond
	// maxAckHold bounds the hold, whatever the RTT: at most an eighth of
	// it, and never more than this. Each ACK costs the receiver a send
	// and the sender a wake-up and a read, and 500 us (with longAckEvery
	// 16) halved the ACKs at the lab's 4 ms RTT, but the hold's length
	// left TestFigureJitterLoss's 1 ms tick row at 84 % of capacity on
	// seed 2 (two paths held at a one-packet window for 5 s, timing out;
	// 93 % at 250 us), and 400 us failed TestTCPShare (the loss-based
	// flow 129 % of its fair share): 250 us until that episode is
	// understood (notes/s18/rev18b.md, F2).
	maxAckHold = 250 * time.Microsecond
	// maxEndpointHold bounds the hold a sender allows for (path.held):
	// the peer's ACK hold and both endpoints' scheduling delays.
	maxEndpointHold = 5 * time.Millisecond
	// longAckEvery is the number of new DATA packets, over all paths of a
	// long connection, after which it acknowledges at once.
	longAckEvery = 8
)

// ackHold returns how long a receiver holds an ACK on a connection of base
// RTT rtt: Config.AckDelay below longAckRTT, else an eighth of rtt, between
// AckDelay and maxAckHold.
func ackHold(cfg *Config, rtt time.Duration) time.Duration {
	if rtt < longAckRTT {
		return cfg.AckDelay
	}
	return max(cfg.AckDelay, min(rtt/8, maxAckHold))
}

// ackRTT returns the connection's RTT as the receiver sees it for ACK
// coalescing: the least base RTT of its paths (seeded from the handshake
// until a path has a sample of its own).
func (c *conn) ackRTT() time.Duration {
	t := time.Duration(-1)
	for _, p := range c.paths {
		if b := p.rtt.base(); t < 0 || b < t {
			t = b
		}
	}
	return max(t, 0)
}

// ackEvery returns after how many new DATA packets the connection
// acknowledges at once, and whether that counts over all paths (a long
// connection) rather than per path.
func (c *conn) ackEvery(rtt time.Duration) (n int, overall bool) {
	if rtt < longAckRTT {
		return c.cfg.AckEvery, false
	}
	return max(c.cfg.AckEvery, longAckEvery), true
}

// unackedAll returns the DATA packets received on all paths since the last
// ACK.
func (c *conn) unackedAll() int {
	n := 0
	for _, p := range c.paths {
		n += p.recv.unacked
	}
	return n
}

// ackPathFor returns the path an ACK goes back on after an arrival at now
// on path arrived: that path, except on a long connection (overall, of
// RTT rtt), where it is the usable path of least smoothed one-way delay
// (recvPath.fwd) among those with an arrival within max(4 rtt, 2 hold): a
// path that stopped delivering is not trusted with the ACKs, while a path
// that a loss left idle for a round trip or two keeps them (with one round
// trip, TestFigureJitterLoss's seed 1 fell from 92 to 76 %). (Sharing the
// ACKs among paths of about the least delay, each on its arrival path,
// was tried: with 0-4 ms of jitter per packet the ACKs that took a
// jittery way back inflated the RTT samples, and TestFigureJitterLoss's
// seed 2 fell from 92 to 80 %.)
func (c *conn) ackPathFor(now time.Duration, arrived int, overall bool, rtt time.Duration) int {
	if !overall {
		return arrived
	}
	recent := max(4*rtt, 2*ackHold(c.cfg, rtt))
	best := -1
	for i, p := range c.paths {
		if p.recv.received == 0 || !p.usable() || now-p.recv.echoAt > recent {
			continue
		}
		if best < 0 || p.recv.fwd < c.paths[best].recv.fwd {
			best = i
		}
	}
	if best < 0 {
		return arrived
	}
	return best
}
