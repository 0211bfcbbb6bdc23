package mrtransport

import (
	"context"
	"log/slog"
	"slices"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
)

// Stats are an endpoint's counters: the engine's socket traffic, the
// core's drops, the transport layer's own, and each connection's and
// path's counters and congestion state.
type Stats struct {
	Rank   int
	Engine EngineStats
	// Core counts the datagrams the core dropped, by reason: garbage
	// sent to a path socket shows up here (DropChecksum, DropShort, ...).
	Core metaroce.EndpointStats
	// StrayEvents counts core events that matched no request;
	// BadControl control messages that failed to parse; CtrlDropped
	// control messages the core refused to queue; Sinks messages of ended
	// operations that were discarded.
	StrayEvents, BadControl, CtrlDropped, Sinks int64
	Peers                                       []PeerStats // by rank, this rank left out
}

// EngineStats count the engine's socket traffic.
type EngineStats struct {
	DatagramsRead, BytesRead       int64
	DatagramsPlaced                int64 // of those read, DATA read straight into a receive buffer
	DatagramsWritten, BytesWritten int64
	ReadBatches, WriteBatches      int64 // system calls (or socket calls) that moved datagrams
	SpinBatches                    int64 // of ReadBatches, those read by a waiting request (Config.SpinWait)
	// SpinsPaid counts the waits whose spin ended with the request
	// complete, or was cut short (spinwait.Gauge) while a spin of the whole
	// budget would have caught it; SpinsWasted those whose request came
	// after the whole budget.
	SpinsPaid, SpinsWasted int64
	// SpinsSkipped counts the waits that did not spin: too many waiters
	// spinning, or spins lately wasted (spinadmit.go).
	SpinsSkipped            int64
	ReadErrors, WriteErrors int64
	NoRoute                 int64 // datagrams dropped for lack of a peer address
	TimerRuns               int64
	// SilenceDrains counts the timer runs that found a connection due to
	// fail for its peer's silence and first read what the sockets held
	// (see metaroce.Endpoint.SilenceDue); LateDrains the other timer runs
	// that did so because they ran late (metaroce.Endpoint.Late: the
	// process was not running, and an ACK may wait unread while an RTO
	// is due); DrainedBatches the batches of datagrams both read.
	SilenceDrains, LateDrains, DrainedBatches int64
	// PortUnreachable counts the ICMP port unreachables read from the
	// sockets' error queues: datagrams sent to a closed peer socket. Of
	// those, PeerGone named a peer with an open connection, which then
	// failed with metaroce.ErrPeerGone (one per report: a dead peer may
	// be reported more than once), and UnreachableIgnored did not (an
	// address of no peer, or of a peer whose connection had already
	// ended). ErrQueueOther counts the other errors read there.
	PortUnreachable, PeerGone, UnreachableIgnored, ErrQueueOther int64
	// HeldEnds counts the sends whose end (completion, failure, Cancel)
	// waited for writes in progress of datagrams that carried payloads
	// from their buffers (heldwrite.go).
	HeldEnds int64
	// DataPolled counts the DATA datagrams the core gave to send, AcksOnData
	// those of them that carried an ACK (metaroce.Config.PiggybackAcks,
	// AckRoom), and AcksPolled the ACK datagrams: on a connection with
	// DATA both ways, how many ACKs went alone for each DATA.
	DataPolled, AcksOnData, AcksPolled int64
	// Naps counts the endpoint reader's naps (Config.CoalesceWait): reads
	// that heard only far peers and slept before reading again.
	Naps int64
}

// PeerStats are the counters of the connection to one rank.
type PeerStats struct {
	Rank   int
	ConnID metaroce.ConnID
	Up     bool
	Err    string // why the connection failed, if it did
	Conn   metaroce.ConnStats
	Paths  []metaroce.PathStats // by path index: bytes, packets, retransmits, RTT, window, state
}

// Stats returns a snapshot of the endpoint's counters.
func (e *Endpoint) Stats() Stats {
	st := &e.eng.st
	s := Stats{Rank: e.cfg.Rank, Engine: EngineStats{
		DatagramsRead: st.datagramsRead.Load(), BytesRead: st.bytesRead.Load(),
		DatagramsPlaced:  st.datagramsPlaced.Load(),
		DatagramsWritten: st.datagramsWritten.Load(), BytesWritten: st.bytesWritten.Load(),
		ReadBatches: st.readBatches.Load(), WriteBatches: st.writeBatches.Load(), SpinBatches: st.spinBatches.Load(),
		SpinsPaid: st.spinsPaid.Load(), SpinsWasted: st.spinsWasted.Load(), SpinsSkipped: st.spinsSkipped.Load(),
		ReadErrors: st.readErrors.Load(), WriteErrors: st.writeErrors.Load(),
		NoRoute: st.noRoute.Load(), TimerRuns: st.timerRuns.Load(),
		SilenceDrains: st.silenceDrains.Load(), LateDrains: st.lateDrains.Load(), DrainedBatches: st.drainedBatches.Load(),
		PortUnreachable: st.portUnreachable.Load(), PeerGone: st.peerGone.Load(),
		UnreachableIgnored: st.unreachableIgnored.Load(), ErrQueueOther: st.errQueueOther.Load(),
		HeldEnds:   st.heldEnds.Load(),
		DataPolled: st.dataPolled.Load(), AcksOnData: st.acksOnData.Load(), AcksPolled: st.acksPolled.Load(),
		Naps: st.naps.Load(),
	}}
	e.eng.lock()
	defer e.eng.unlock()
	s.Core = e.eng.core.Stats()
	c := e.counters
	s.StrayEvents, s.BadControl, s.CtrlDropped, s.Sinks = c.strayEvents, c.badControl, c.ctrlDropped, c.sinks
	for _, p := range e.peers {
		if p == nil {
			continue
		}
		ps := PeerStats{Rank: p.rank, ConnID: p.conn, Up: p.up}
		if p.err != nil {
			ps.Err = p.err.Error()
		}
		if p.conn != 0 {
			ps.Conn, ps.Paths, _ = e.eng.core.ConnStats(p.conn, nil)
		}
		s.Peers = append(s.Peers, ps)
	}
	return s
}

// LogStats writes the counters to the configured Logger at level: one
// record for the endpoint and one per path of every connection.
func (e *Endpoint) LogStats(ctx context.Context, level slog.Level) {
	s := e.Stats()
	en := s.Engine
	e.log.Log(ctx, level, "mrtransport: endpoint",
		"read", en.DatagramsRead, "readBytes", en.BytesRead, "placed", en.DatagramsPlaced, "written", en.DatagramsWritten,
		"writtenBytes", en.BytesWritten, "spinBatches", en.SpinBatches, "spinsPaid", en.SpinsPaid, "spinsWasted", en.SpinsWasted, "spinsSkipped", en.SpinsSkipped, "readErrors", en.ReadErrors, "writeErrors", en.WriteErrors,
		"noRoute", en.NoRoute, "naps", en.Naps, "silenceDrains", en.SilenceDrains, "lateDrains", en.LateDrains, "drainedBatches", en.DrainedBatches,
		"late", s.Core.Late, "lateRuns", s.Core.LateRuns, "portUnreachable", en.PortUnreachable, "peerGone", en.PeerGone,
		"unreachableIgnored", en.UnreachableIgnored, "errQueueOther", en.ErrQueueOther,
		"dropChecksum", s.Core.DropChecksum, "dropShort", s.Core.DropShort,
		"dropMalformed", s.Core.DropMalformed, "dropUnknownConn", s.Core.DropUnknownConn,
		"dropAuth", s.Core.DropAuth, "dropReplay", s.Core.DropReplay,
		"strayEvents", s.StrayEvents, "badControl", s.BadControl, "sinks", s.Sinks)
	for _, p := range s.Peers {
		e.log.Log(ctx, level, "mrtransport: connection", "peer", p.Rank, "up", p.Up, "err", p.Err,
			"msgsSent", p.Conn.MsgsSent, "msgsRecv", p.Conn.MsgsRecv, "bytesSent", p.Conn.BytesSent,
			"bytesRecv", p.Conn.BytesRecv, "peerRate", p.Conn.PeerRate, "share", p.Conn.Share,
			"credit", p.Conn.Credit, "discarded", p.Conn.Discarded)
		for i, ps := range p.Paths {
			e.log.Log(ctx, level, "mrtransport: path", "peer", p.Rank, "path", i, "state", ps.State.String(),
				"srtt", ps.SRTT, "minRTT", ps.MinRTT, "cwnd", ps.Cwnd, "inflight", ps.Inflight,
				"packetsSent", ps.PacketsSent, "bytesSent", ps.BytesSent, "retransmits", ps.Retransmits,
				"lost", ps.PacketsLost, "timeouts", ps.Timeouts, "spuriousTimeouts", ps.SpuriousTimeouts, "packetsRecv", ps.PacketsRecv,
				"dupsRecv", ps.DupsRecv, "ecnRecv", ps.ECNRecv)
		}
	}
}

var _ transport.StatsReporter = (*Endpoint)(nil)

// TransportStats implements transport.StatsReporter: per peer, the
// connection's messages and bytes, target rates and, per path, bytes,
// share, packets, resends, RTT, window and state. It is Stats in the
// transport's common form.
func (e *Endpoint) TransportStats() transport.Stats {
	s := e.Stats()
	out := transport.Stats{Rank: s.Rank, Peers: make([]transport.PeerStats, 0, len(s.Peers)),
		AuthDropped: s.Core.DropAuth, Replayed: s.Core.DropReplay}
	for _, p := range s.Peers {
		c := p.Conn
		ps := transport.PeerStats{Rank: p.Rank, Transport: transport.StatsMetaRoCE, Up: p.Up, Err: p.Err,
			Traffic:    transport.Traffic{MsgsSent: c.MsgsSent, BytesSent: c.BytesSent, MsgsRecv: c.MsgsRecv, BytesRecv: c.BytesRecv},
			TargetRate: c.PeerRate, RecvShare: c.Share}
		for i, pa := range p.Paths {
			ps.Paths = append(ps.Paths, commonPath(i, pa))
		}
		transport.SetShares(ps.Paths)
		out.Peers = append(out.Peers, ps)
	}
	slices.SortFunc(out.Peers, func(a, b transport.PeerStats) int { return a.Rank - b.Rank })
	return out
}

// commonPath is path i's counters in the transport's common form.
func commonPath(i int, p metaroce.PathStats) transport.PathStats {
	out := transport.PathStats{Index: i, State: p.State.String(), BytesSent: p.BytesSent,
		PacketsSent: p.PacketsSent, Retransmits: p.Retransmits, Lost: p.PacketsLost, Timeouts: p.Timeouts, SpuriousTimeouts: p.SpuriousTimeouts,
		PacketsRecv: p.PacketsRecv, SRTT: p.SRTT, MinRTT: p.MinRTT, Window: p.Cwnd, Inflight: p.Inflight,
		FabricSRTT: p.FabricSRTT, FabricMinRTT: p.FabricMinRTT, CutsDelay: p.CutsDelay, CutsLoss: p.CutsLoss}
	if p.SRTT > 0 {
		out.WindowRate = int64(float64(p.Cwnd) / p.SRTT.Seconds())
	}
	return out
}

// logEngine logs, at info, the engine's socket counters over the
// endpoint's life (EngineStats): what a job's CPU per byte comes from,
// the datagrams per system call above all (sendmmsg and recvmmsg batches,
// GSO trains counting as their datagrams), and the timer's and the
// spinning waiters' share, and the ACKs the core sent alone by kind of
// connection and reason (metaroce.AckCounts). Close calls it once, after
// the engine stops.
func (e *Endpoint) logEngine() {
	if !e.log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	st := &e.eng.st
	e.eng.lock()
	acks := e.eng.core.Stats().Acks
	e.eng.unlock()
	e.log.Info("mrtransport: engine",
		"datagramsWritten", st.datagramsWritten.Load(), "writeBatches", st.writeBatches.Load(),
		"datagramsRead", st.datagramsRead.Load(), "readBatches", st.readBatches.Load(),
		"spinBatches", st.spinBatches.Load(), "timerRuns", st.timerRuns.Load(),
		"bytesWritten", st.bytesWritten.Load(), "bytesRead", st.bytesRead.Load(),
		"data", st.dataPolled.Load(), "acksOnData", st.acksOnData.Load(), "acks", st.acksPolled.Load(),
		"naps", st.naps.Load(), "acksShort", acks.Text(false), "acksLong", acks.Text(true))
}
