package transport

import (
	"slices"
	"sync/atomic"
	"time"
)

// Stats is a snapshot of one endpoint's traffic, per peer and, for
// MetaRoCE, per path: what [StatsOf] returns. It is a copy: the caller
// owns it, may keep and change it, and holds no lock of the endpoint.
// Counters count from the endpoint's start and only grow; to get a rate,
// take two snapshots and subtract (see [Traffic.Sub]).
type Stats struct {
	Rank  int         // this endpoint's rank
	Peers []PeerStats // ascending by rank, one per peer the transport reports (never this rank)
	// AuthDropped counts what the endpoint refused for the job key:
	// packets or frames whose tag did not verify, handshakes that did not
	// prove the key; Replayed the authenticated packets dropped because
	// they had been received before (MetaRoCE). Both stay 0 without a key.
	AuthDropped, Replayed int64
}

// Peer returns the statistics of the peer with rank r, if s has them.
func (s Stats) Peer(r int) (PeerStats, bool) {
	i, ok := slices.BinarySearchFunc(s.Peers, r, func(p PeerStats, r int) int { return p.Rank - r })
	if !ok {
		return PeerStats{}, false
	}
	return s.Peers[i], true
}

// Transport names in PeerStats.Transport.
const (
	StatsTCP      = "tcp"
	StatsSHM      = "shm"
	StatsMetaRoCE = "metaroce"
	StatsInProc   = "inproc"
)

// PeerStats are the counters of the connection to one peer rank.
type PeerStats struct {
	Rank      int    // the peer's rank in the endpoint's world
	Transport string // which transport reaches it: StatsTCP, StatsSHM, StatsMetaRoCE, ...
	// Up is false once the connection to the peer failed; Err then says why.
	Up  bool
	Err string
	// Traffic counts the messages completed with the peer, and their
	// bytes (the messages' own, not the wire's).
	Traffic
	// TargetRate is the rate in bytes/s the peer, as receiver, last asked
	// this rank to send at (MetaRoCE; 0: none asked). RecvShare is the rate
	// this rank, as receiver, gives the peer.
	TargetRate, RecvShare int64
	// Paths are the connection's paths (MetaRoCE), by index; nil for
	// transports with one path.
	Paths []PathStats
}

// Traffic counts completed messages and their bytes, each way. A send is
// counted once the transport knows it delivered: a transport whose send
// requests complete before the peer acknowledges (MetaRoCE's eager sends)
// counts them at the acknowledgement, so the count may trail the
// completed requests by up to a round trip.
type Traffic struct {
	MsgsSent, BytesSent int64
	MsgsRecv, BytesRecv int64
}

// Sub returns t minus an earlier snapshot u: the traffic between them.
func (t Traffic) Sub(u Traffic) Traffic {
	return Traffic{t.MsgsSent - u.MsgsSent, t.BytesSent - u.BytesSent, t.MsgsRecv - u.MsgsRecv, t.BytesRecv - u.BytesRecv}
}

// Add returns the sum of t and u.
func (t Traffic) Add(u Traffic) Traffic {
	return Traffic{t.MsgsSent + u.MsgsSent, t.BytesSent + u.BytesSent, t.MsgsRecv + u.MsgsRecv, t.BytesRecv + u.BytesRecv}
}

// PathStats are one path's counters and congestion state as its sender
// sees them (MetaRoCE).
type PathStats struct {
	Index int
	State string // good, skip (congested within the last RTT), suspect or dead
	// BytesSent counts the payload bytes sent on the path, resends
	// included; Share is BytesSent's part of the sum over the connection's
	// paths, from 0 to 1 (0 while nothing was sent).
	BytesSent int64
	Share     float64
	// PacketsSent counts DATA packets sent, Retransmits those that were
	// resends, Lost those declared lost, Timeouts the retransmission
	// timeouts; PacketsRecv the DATA packets received new on the path.
	PacketsSent, Retransmits, Lost, Timeouts, PacketsRecv int64
	// SpuriousTimeouts counts the Timeouts found spurious afterwards: an
	// ACK of the original packet arrived, so the path was slow (or its
	// sender starved of CPU), not losing.
	SpuriousTimeouts int64
	SRTT, MinRTT     time.Duration // smoothed and lowest RTT (0: no sample yet)
	// FabricSRTT and FabricMinRTT are the smoothed and lowest RTT of the
	// delay signal's view (MetaRoCE: without the endpoints' scheduling
	// delays where the kernel's receive stamps are used; else SRTT and
	// MinRTT's). CutsDelay and CutsLoss count the window's cuts for an
	// RTT above its target and for loss.
	FabricSRTT, FabricMinRTT time.Duration
	CutsDelay, CutsLoss      int64
	// Window is the congestion window and Inflight the datagram bytes in
	// flight; WindowRate is Window/SRTT in bytes/s, the rate the window
	// allows (0 before the first RTT sample).
	Window, Inflight int
	WindowRate       int64
}

// StatsReporter is implemented by endpoints that report statistics;
// wrappers of an endpoint forward it. TransportStats returns a snapshot
// (see [Stats]); it is safe for concurrent use and takes the endpoint's
// locks only while it copies.
type StatsReporter interface {
	TransportStats() Stats
}

// StatsOf returns ep's statistics: what its TransportStats method reports,
// or, for an endpoint without one, Stats with its rank and no peers.
func StatsOf(ep Endpoint) Stats {
	if r, ok := ep.(StatsReporter); ok {
		return r.TransportStats()
	}
	return Stats{Rank: ep.Rank()}
}

// Counter counts a transport's completed messages and bytes with one
// peer; transports keep one per peer. The zero value is ready, and it is
// safe for concurrent use.
type Counter struct {
	msgsSent, bytesSent, msgsRecv, bytesRecv atomic.Int64
}

// Count adds one completed message of n bytes, sent if send, else received.
func (c *Counter) Count(send bool, n int) {
	if send {
		c.msgsSent.Add(1)
		c.bytesSent.Add(int64(n))
		return
	}
	c.msgsRecv.Add(1)
	c.bytesRecv.Add(int64(n))
}

// Load returns the counts so far.
func (c *Counter) Load() Traffic {
	return Traffic{c.msgsSent.Load(), c.bytesSent.Load(), c.msgsRecv.Load(), c.bytesRecv.Load()}
}

// SetShares fills in each path's Share of the paths' BytesSent.
func SetShares(paths []PathStats) {
	var sum int64
	for _, p := range paths {
		sum += p.BytesSent
	}
	for i := range paths {
		paths[i].Share = 0
		if sum > 0 {
			paths[i].Share = float64(paths[i].BytesSent) / float64(sum)
		}
	}
}
