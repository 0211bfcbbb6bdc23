package metaroce

import (
	"strconv"
	"time"
)

// PathStats are the counters and congestion state of one path of a
// connection.
type PathStats struct {
	State        PathState
	SRTT, RTTVar time.Duration // smoothed full RTT and its mean deviation
	MinRTT       time.Duration // lowest full RTT sampled
	// FabricSRTT and FabricMinRTT are the smoothed and lowest fabric RTT,
	// without the endpoints' scheduling delays when the driver gives
	// arrival times (the delay signal's view; see "Arrival times").
	FabricSRTT, FabricMinRTT time.Duration
	Cwnd                     int // congestion window in bytes
	Inflight                 int // datagram bytes in flight

	PacketsSent  int64 // DATA packets sent, retransmissions included
	BytesSent    int64 // payload bytes sent, retransmissions included
	Retransmits  int64 // DATA packets that were resends
	PacketsAcked int64
	PacketsLost  int64 // packets declared lost (by SACK gap or timeout)
	BytesAcked   int64 // datagram bytes acknowledged
	Timeouts     int64 // retransmission timeouts
	// SpuriousTimeouts counts the timeouts found spurious because an ACK
	// then covered the packet whose timer fired (spurious.go).
	SpuriousTimeouts int64
	ECNEchoed        int64 // CE marks the peer reported for our packets
	CutsECN          int64 // window cuts for CE marks
	CutsLoss         int64 // window cuts for loss
	CutsDelay        int64 // window cuts for RTT above target

	PacketsRecv int64 // DATA packets received new on this path
	DupsRecv    int64 // DATA packets received again
	ECNRecv     int64 // CE-marked packets received (mod 2^32)
}

// ConnStats are the counters of one connection.
type ConnStats struct {
	Peer        uint64 // the peer's node id
	Established bool
	Paths       int // paths in use

	MsgsSent, MsgsRecv   int64 // messages completed
	BytesSent, BytesRecv int64 // message bytes completed
	// BytesArrived counts message bytes received for the first time
	// (placed, held or discarded), as they arrive.
	BytesArrived    int64
	PendingSends    int   // messages queued or in flight
	PostedRecvs     int   // receives posted and not yet matched
	UnexpectedBytes int64 // bytes held for receives not yet posted
	// Budget is the unexpected budget this side gives the peer: from
	// Config.UnexpectedBytes, grown to the bandwidth-delay product up to
	// Config.UnexpectedMax.
	Budget int64

	// PeerRate is the target rate the peer last gave us (bytes/s, 0: none);
	// Share the rate this side gives the peer.
	PeerRate, Share int64
	// Credit is the unconfirmed bytes we may still send to the peer.
	Credit int64
	// RetransmitQueue is the pieces waiting to be resent.
	RetransmitQueue int
	// Discarded counts DATA dropped by the message layer: beyond the message
	// window, malformed pieces, or beyond the unexpected budget.
	Discarded int64
	// AcksPiggybacked counts the ACKs sent on DATA (Config.PiggybackAcks).
	AcksPiggybacked int64
	// Auth is the connection's authentication (AuthNone without a key).
	Auth AuthMode
	// Drains counts the round trips the connection held its DATA to let
	// a bottleneck's queue empty (see drainEvery).
	Drains int64
}

// EndpointStats counts what an Endpoint dropped, by reason.
type EndpointStats struct {
	DropShort       int64 // shorter than a header, or a truncated field
	DropVersion     int64 // unknown version byte
	DropChecksum    int64 // CRC32C mismatch
	DropMalformed   int64 // bad type, flags or field values
	DropUnknownConn int64 // connection id not ours (or closed)
	DropBadPath     int64 // path index beyond the connection's paths
	DropTooLarge    int64 // larger than MaxDatagram
	// DropAuth counts packets refused for the key: a trailer missing or
	// whose tag did not verify, a HELLO without a valid proof (refused),
	// a HELLO-ACK whose proof did not verify.
	DropAuth int64
	// DropReplay counts authenticated packets whose packet number was
	// seen already, or lay too far below the highest seen on the path.
	DropReplay    int64
	Conns         int   // open connections
	ActiveSenders int   // connections counted in the rate share
	RecvCapacity  int64 // capacity being shared (configured or measured), bytes/s
	// LateRuns counts the inputs that came after the earliest timer
	// NextTimeout had given (the endpoint was not running: a loaded
	// machine), and Late sums by how much; that time is not counted as
	// the peers' silence (see PeerTimeout).
	LateRuns int64
	Late     time.Duration
	// RemnantBytes is the bytes of whole messages kept from ended
	// connections now; RemnantDropped those forgotten for
	// Config.RemnantBytes.
	RemnantBytes, RemnantDropped int64
	// Acks counts the ACKs sent alone, by kind of connection and reason.
	Acks AckCounts
}

func (p *path) stats() PathStats {
	s := p.st
	s.State, s.SRTT, s.RTTVar, s.MinRTT = p.state, p.rtt.srtt, p.rtt.rttvar, p.rtt.min
	s.FabricSRTT, s.FabricMinRTT = p.fab.srtt, p.fab.min
	s.Cwnd, s.Inflight = p.win.cwnd, p.inflight
	s.CutsECN, s.CutsLoss, s.CutsDelay = p.win.cuts[signalECN], p.win.cuts[signalLoss], p.win.cuts[signalDelay]
	s.PacketsRecv, s.DupsRecv, s.ECNRecv = p.recv.received, p.recv.dups, int64(p.recv.ce)
	return s
}

// AckReason is why a receiver sent an ACK: what made it due.
type AckReason uint8

const (
	AckHeld    AckReason = iota // its hold (Config.AckDelay, ackHold) ran out
	AckEvery                    // Config.AckEvery (or the long count) new packets
	AckGap                      // a gap: loss or reordering
	AckLast                     // a message's last piece, or the one completing it
	AckDup                      // a duplicate arrived
	AckControl                  // a control piece, a probe, the handshake
	AckCredit                   // a posted receive: credit or grants owed
	numAckReasons
)

// AckCounts counts the ACKs sent alone (not on DATA) by the reason they
// became due, on short connections (RTT under longAckRTT: Config.AckEvery
// and AckDelay apply) and long ones (coalesced, ackhold.go).
type AckCounts struct {
	Short, Long [numAckReasons]int64
	// ShortPackets and LongPackets count the new DATA packets those ACKs
	// reported.
	ShortPackets, LongPackets int64
}

// Text returns the short (long false) or long connections' counts as
// "held:N,every:N,...,packets:N", every reason in order, then the packets.
func (a *AckCounts) Text(long bool) string {
	n, pk := &a.Short, a.ShortPackets
	if long {
		n, pk = &a.Long, a.LongPackets
	}
	b := make([]byte, 0, 112)
	for r := range numAckReasons {
		if r > 0 {
			b = append(b, ',')
		}
		b = append(b, r.String()...)
		b = append(b, ':')
		b = strconv.AppendInt(b, n[r], 10)
	}
	b = append(b, ",packets:"...)
	b = strconv.AppendInt(b, pk, 10)
	return string(b)
}

// String names the reason, as the counters' logs print it.
func (r AckReason) String() string {
	switch r {
	case AckHeld:
		return "held"
	case AckEvery:
		return "every"
	case AckGap:
		return "gap"
	case AckLast:
		return "last"
	case AckDup:
		return "dup"
	case AckControl:
		return "control"
	case AckCredit:
		return "credit"
	}
	return "?"
}

// ConnMinRTT returns the lowest round trip over a connection's paths
// that have a sample: each path's FabricMinRTT, or its MinRTT where it
// has no fabric sample, as ConnStats's PathStats give them; 0 if no path
// has one. It reports false for a connection ConnStats does not know.
// It reads the figures in place, without ConnStats's copies of every
// path's counters (the endpoint reader asks it of every peer every
// 20 ms: mrtransport's farPeers).
func (e *Endpoint) ConnMinRTT(id ConnID) (time.Duration, bool) {
	low := time.Duration(0)
	note := func(fabric, full time.Duration) {
		rtt := fabric
		if rtt <= 0 {
			rtt = full
		}
		if rtt > 0 && (low == 0 || rtt < low) {
			low = rtt
		}
	}
	c := e.conns[id]
	if c == nil {
		rm := e.remnants[id]
		if rm == nil {
			return 0, false
		}
		for _, ps := range rm.paths {
			note(ps.FabricMinRTT, ps.MinRTT)
		}
		return low, true
	}
	for _, p := range c.paths {
		note(p.fab.min, p.rtt.min)
	}
	return low, true
}
