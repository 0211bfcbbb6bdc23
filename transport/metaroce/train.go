package metaroce

import "time"

// Trains. A sender paced by its peer's target rate (the receiver's share of
// its capacity, Config.RecvCapacity) that lets its DATA out one datagram
// per pacing tick or per ACK, each on the next path, pays a system call, a wake-up and a
// trip through the kernel's per-packet path (veth, bridge, router, qdisc)
// for every datagram. Instead, as Linux sizes its TSO bursts from the
// pacing rate, the connection sends DATA in trains: runs of datagrams that
// go back to back on one path, so that a driver writing what it polled in
// one batch per path socket sends each train as one write (a GSO train,
// one buffer through the kernel). Pacing gates a train's first datagram
// only (pollData); the rest follow at once, and each still moves the
// pacing clock on by its gap (pace), so the paced rate is unchanged and
// only its grain grows. A train holds trainLen datagrams: what the pacing
// rate sends in trainSpan or half the connection's base RTT if shorter,
// at least one and at most maxTrain datagrams and trainBytes bytes; on a
// connection of base RTT under longAckRTT (a datacenter's), one, as before
// trains (with trains of 2 ms, 16 senders' trains met in one queue:
// TestFigureIncast at 77 % of the bottleneck; of half the RTT, its script
// finished 2.5 % later). A train ends early when its path has no
// room, is no longer usable, or falls behind another path in health
// (trainPath); the next datagram then starts a new one. Where the
// windows alone pace a connection, it sends trains only if it is long
// (its fabric floor RTT at least windowTrainRTT: a WAN), of at most
// maxWindowTrain datagrams, and none past its path's window (a follower
// only where the path's room holds it): a datacenter's bursts already
// reach pacing's bound (paceSpan), and one path's share of them would cut
// into a competing loss-based flow's (TestTCPShare,
// TestLANShareWithLossBased) and into an incast's (TestFigureIncast,
// TestIncastStaggered). That takes in the two-site lab, whose
// connections have no target rate (the ranks' close lines say
// targetRate=-). What lets them (session 31, train31): a train is read as
// one burst. Its datagrams carry their head's SentAt, every other
// datagram a SentAt of its own (sentAtFor), and the receiver echoes for
// each later one that SentAt moved on by how long after the head it
// arrived (recvPath.burstEcho), so the RTT and one-way delay samples read
// the head's delay: a train queues behind itself at the bottleneck, and
// its later datagrams' samples read that as congestion
// (TestTrainReadsAsOneBurst); a short connection's per-path ACK count
// counts bursts. A train's losses count once toward a competing path's
// loss share (detectLoss), as a tail drop takes several of them. Without
// the burst reading, trains under the windows' pacing (1 ms of the rate,
// 2 to 8 datagrams, on every connection) failed TestTCPShare (the
// loss-based flow at 128 % of its fair share, 120 % allowed),
// TestFigureIncast and TestLANShareWithLossBased, and on long connections
// only, of at most 3, TestTCPShare (147 %); with it, up to 8 still failed
// TestTCPShare (152 %), gated by the base RTT rather than the fabric's
// floor TestLANShareWithLossBased (late reads without arrival times show
// a base of 1.1 ms: 99/0 %), up to 3 past the window
// TestIncastStaggered (drops 1.13 %, 1 % allowed) and
// TestAckRoomCarriesAcksOnFullPieces, and up to 3 within it
// TestIncastStaggered's mean over its gaps (1.16 %). Trains of up to 2
// within the window on short connections too (and so on every connection
// before its first fabric sample) failed TestLANShareWithLossBased with
// late reads (99/0 %), TestTCPShare (the loss-based flow at 70 %) and
// TestIncastStaggered (1.73 % at 150 ms).
// Nor does a window-paced burst keep to one path (session 30, lan30,
// bench/results/cpu_lab/lan30.md): sending the DATA that one poll lets
// out at one instant on one path, up to one GSO write, with pacing and
// the windows as before, cut the lab's sendmmsg calls by a third and its
// CPU by about 6 %, but a short connection counts its ACKs per path
// (ackEvery), so a path's burst clocks more of them (the lab's LAN ACKs
// at the count +20-40 %), and where paths take different links it moves
// load between them: TestTCPShare (the loss-based flow at 146 % of its
// share) and TestLANShareWithLossBased (70/29 %) failed, and so did the
// latter, late reads (99/0 %), with the burst kept on short connections
// without congestion signals only, and both with it kept only on a path
// of as much room as the scheduler's choice.
//
// Short connections (session 32, lantrain32,
// bench/results/cpu_lab/lantrain32.md): trains bounded by the path's own
// window barely grow on a LAN (the room an ACK frees on a path is one or
// two datagrams: 1.40 -> 1.44 DATA a write in a LAN sim), so there a train
// is bounded by the room of all the connection's paths together: its
// followers may pass its path's window, and the other paths keep their own
// room, so the connection's in flight may pass the sum of its windows by
// what its trains took past their paths' (a train starts only on a path
// with room: at most maxTrain-1 datagrams, within trainBytes, a path). That
// excess is what makes the trains: connRoom counting a path past its window
// against the others (the connection held within the sum) left the LAN sim
// at 1.40 DATA a write, as without trains (TestTrainsOnALANPath, session
// 32's read-over). It is sent only where that sum is the connection's share
// of one link and nothing contends for it (lanTrains): a fabric sample
// under windowTrainRTT, the path out of slow start (trains in slow start,
// into a link a loss-based flow was starting on, cost that flow its first
// RTO: TestLANShareWithLossBased with late reads, MetaRoCE 94 %, loss-based
// 1 %; on main too, other seeds of its late reader leave the loss-based
// flow 0 %: 16 of seeds 9-40, 10 with these trains), and none of the
// connection's paths with an ECN mark or a loss for congestion within
// floorWindow, or competing. Up to 7 of 9000 B (trainBytes) in the two-site
// lab: 29 % fewer sendmmsg, 4-8 % less job CPU.
const (
	// trainSpan is how long a train lasts at the pacing rate, at most.
	// Trains of 2 ms (5 datagrams at the lab's 25 MB/s share) put the
	// 4 connections' trains into one 200 Mbit/s path's queue at once: in
	// TestWANSimHierarchical (3 seeds, 16 MiB) 150-200 spurious timeouts
	// against 14-20 and 75-76 % of the bound against 78-82 %.
	trainSpan = time.Millisecond
	// maxTrain is the most datagrams in a train.
	maxTrain = 8
	// trainBytes bounds a train's datagram bytes: one GSO write
	// (udpio.MaxPayload, 65507) holds it.
	trainBytes = 64 << 10
	// windowTrainRTT is the least fabric floor RTT (conn.fabRTT) of a
	// connection whose windows alone pace it that sends trains: a LAN read
	// late without arrival times shows 1.1 ms (TestLANShareWithLossBased,
	// where trains of up to 7 left the loss-based flow 0 % of the link).
	windowTrainRTT = 2 * time.Millisecond
	// maxWindowTrain is the most datagrams in such a connection's train:
	// of 3, TestIncastStaggered (6 senders into one 20 ms buffer) dropped
	// 1.16 % over its gaps (main 0.79 %, 1 % allowed); of 2, 0.63 %.
	maxWindowTrain = 2
)

// trainLen returns how many datagrams of size bytes a train holds at the
// pacing rate rate (bytes/s) on a connection of base RTT rtt: rate x
// min(trainSpan, rtt/2) over size, at most maxTrain and trainBytes of
// datagrams, at least one; one if rtt is under longAckRTT.
func trainLen(rate float64, rtt time.Duration, size int) int {
	if rtt < longAckRTT {
		return 1
	}
	size = max(size, 1)
	n := int(rate * min(trainSpan, rtt/2).Seconds() / float64(size))
	return max(min(n, maxTrain, trainBytes/size), 1)
}

// trainPath returns the path the next DATA datagram takes: the running
// train's, while the train has datagrams left and its path takes one
// (path.takes: has room, or for a short connection's train is usable) and
// is as healthy as best (the scheduler's choice, pickPath) or good; else
// best.
func (c *conn) trainPath(best *path) *path {
	t := c.train
	if t == nil || best == nil || t == best || c.trainLeft <= 0 || !t.takes(c.trainOver) {
		return best
	}
	if t.state != PathGood && t.state != best.state {
		return best
	}
	c.cursor = (int(t.idx) + 1) % len(c.paths)
	return t
}

// trainSent accounts a DATA datagram of size bytes sent on p at pacing
// rate rate, set by the peer's target rate if peer: it continues the
// running train if p is its path and it has datagrams left, else starts
// a new train on p: of trainLen datagrams if peer; else, on a connection
// of fabric floor RTT at least windowTrainRTT, of at most maxWindowTrain
// and what p's window still holds; else, where lanTrains allows, of at
// most maxTrain datagrams and trainBytes bytes and what the windows of all
// the connection's paths still hold together (trainOver: its followers may
// pass p's own window); else of one.
func (c *conn) trainSent(p *path, rate float64, peer bool, size int, now time.Duration) {
	if c.train == p && c.trainLeft > 0 {
		c.trainLeft--
		return
	}
	c.train, c.trainLeft, c.trainOver = p, 0, false
	switch {
	case peer:
		c.trainLeft = trainLen(rate, c.ackRTT(), size) - 1
	case c.fabRTT() >= windowTrainRTT:
		// Within the path's window: no follower overshoots it.
		c.trainLeft = min(trainLen(rate, c.ackRTT(), size)-1, maxWindowTrain-1, max(p.room(), 0)/max(size, 1))
	case c.lanTrains(p, now):
		// Within the connection's windows, past p's own.
		c.trainLeft = min(maxTrain, trainBytes/max(size, 1), c.connRoom()/max(size, 1)+1) - 1
		c.trainOver = true
	}
}

// lanTrains reports whether a short connection (one with a fabric sample
// below windowTrainRTT: trainSent asks it after the long one's case)
// starts a train on p at now: p is out of slow start and none of the
// connection's paths took an ECN mark or a loss for congestion within
// floorWindow (path.congested) or competes with a loss-based flow.
func (c *conn) lanTrains(p *path, now time.Duration) bool {
	if c.fabRTT() <= 0 || p.win.cwnd < p.win.ssthresh {
		return false
	}
	for _, q := range c.paths {
		if q.congested(now) || q.competingAt(now) {
			return false
		}
	}
	return true
}

// connRoom returns the datagram bytes the windows of the connection's
// paths with room still allow together (a path past its window counts
// 0, not against the others: see the comment at the top).
func (c *conn) connRoom() int {
	n := 0
	for _, p := range c.paths {
		n += max(p.room(), 0)
	}
	return n
}

// takes reports whether a train may put another datagram on the path: it
// has room, or (over: a short connection's train) it is usable and its
// ring is not full.
func (p *path) takes(over bool) bool {
	return p.room() > 0 || over && p.usable() && p.next-p.base < maxRing
}

// sentAtFor returns the SentAt of a DATA datagram about to leave on p at
// now, and notes it as the path's last: a train follower's is its head's,
// any other datagram's now, or a nanosecond after the path's last if that
// was at now or later. So the packets of one SentAt on a path are one
// train, and a receiver reads them as one burst (recvPath.burstEcho),
// whatever else one poll lets out at the same instant.
func (c *conn) sentAtFor(p *path, now time.Duration) time.Duration {
	at := now
	switch {
	case c.train == p && c.trainLeft > 0:
		at = p.lastSentAt
	case p.st.PacketsSent > 0 && at <= p.lastSentAt:
		at = p.lastSentAt + 1
	}
	p.lastSentAt = at
	return at
}

// fabRTT returns the least fabric floor RTT (the long minimum, without
// the endpoints' scheduling delays: path.fab) of the connection's paths
// that have a sample, or 0 if none has.
func (c *conn) fabRTT() time.Duration {
	t := time.Duration(-1)
	for _, p := range c.paths {
		if b := p.fab.floorRTT(); p.fab.has && (t < 0 || b < t) {
			t = b
		}
	}
	return max(t, 0)
}
