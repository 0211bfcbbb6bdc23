package launcher

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport"
)

// The world's statistics are its communicator's: World.Stats (from the
// embedded collective.Comm) gives this rank's traffic with every other
// rank, per transport and, on MetaRoCE, per path. The launcher's
// wrapper of the transport forwards them.

var _ transport.StatsReporter = (*guardedEndpoint)(nil)

// TransportStats implements transport.StatsReporter for the wrapped
// endpoint.
func (g *guardedEndpoint) TransportStats() transport.Stats { return transport.StatsOf(g.inner) }

// logTransports logs, at info, which transport reaches which peers
// ("shm=1-3 metaroce=4-7") and the world communicator's chunk size and
// the message size up to which it picks the small-message algorithms, the
// sizes up to which its calls run on the shared-memory board (boardText;
// slot: Comm.BoardSlotBytes), and the instruction set of the reduction
// kernels (reduce.KernelLevel), in one line.
func logTransports(log *slog.Logger, s transport.Stats, cfg collective.Config, slot int) {
	if !log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	attrs := []any{"peers", transportsByPeer(s),
		"chunk", sizeText(int64(cfg.ChunkBytes)), "small", sizeText(int64(cfg.SmallBytes))}
	if b := boardText(s, cfg, slot); b != "" {
		attrs = append(attrs, "board", b)
	}
	log.Info("gocoll: transport per peer", append(attrs, "kernels", reduce.KernelLevel())...)
}

// boardText says up to which sizes the world's calls run on the
// shared-memory board (collective.AlgoBoard), when every peer is reached
// over shm (the board needs the whole communicator on one host's shared
// memory): "allreduce<=16.0KiB broadcast<=64.0KiB alltoall<=16.0KiB/peer",
// each the configured limit or what a board slot holds (slot bytes:
// Comm.BoardSlotBytes, shared by an AllToAll's blocks), the smaller; a
// limit that is off printed as "-", or "off" when all are or there is no
// board (slot 0). It is "" when some peer is not on shm, or there is no
// peer.
func boardText(s transport.Stats, cfg collective.Config, slot int) string {
	if len(s.Peers) == 0 {
		return ""
	}
	for _, p := range s.Peers {
		if p.Transport != transport.StatsSHM {
			return ""
		}
	}
	limit := func(n, room int) string {
		if n < 0 {
			return "-"
		}
		return sizeText(int64(min(n, room)))
	}
	if slot <= 0 || cfg.BoardBytes < 0 && cfg.BoardBroadcastBytes < 0 && cfg.BoardBlockBytes < 0 {
		return "off"
	}
	return "allreduce<=" + limit(cfg.BoardBytes, slot) + " broadcast<=" + limit(cfg.BoardBroadcastBytes, slot) +
		" alltoall<=" + limit(cfg.BoardBlockBytes, slot/(len(s.Peers)+1)) + "/peer"
}

// logBoardUse logs, at close (SubsysNet at info), how many of the world
// communicator's calls ran on the shared-memory board; nothing when none
// did, so that jobs across hosts print no board line.
func logBoardUse(log *slog.Logger, comm *collective.Comm) {
	if comm == nil || !log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	if n := comm.BoardCalls(); n > 0 {
		log.Info("gocoll: board", "calls", n)
	}
}

// transportsByPeer names each transport with the ranks it reaches, as
// ranges, transports in the order of their first peer.
func transportsByPeer(s transport.Stats) string {
	ranks := map[string][]int{}
	var order []string
	for _, p := range s.Peers {
		name := p.Transport
		if name == "" {
			name = "?"
		}
		if ranks[name] == nil {
			order = append(order, name)
		}
		ranks[name] = append(ranks[name], p.Rank)
	}
	parts := make([]string, len(order))
	for i, name := range order {
		parts[i] = name + "=" + rankRanges(ranks[name])
	}
	return strings.Join(parts, " ")
}

// rankRanges writes ascending ranks as "0,2-5".
func rankRanges(rs []int) string {
	sort.Ints(rs)
	var b strings.Builder
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j == i {
			fmt.Fprint(&b, rs[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", rs[i], rs[j])
		}
		i = j + 1
	}
	return b.String()
}

// logStats logs, at info, one line per peer and one per path (that carried
// packets or is not good) of this rank's traffic since the world formed:
// at close, before the transport goes.
func logStats(log *slog.Logger, s transport.Stats) {
	if !log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	for _, p := range s.Peers {
		attrs := []any{"peer", p.Rank, "transport", p.Transport, "sent", fmt.Sprintf("%s/%d", sizeText(p.BytesSent), p.MsgsSent),
			"recv", fmt.Sprintf("%s/%d", sizeText(p.BytesRecv), p.MsgsRecv)}
		if !p.Up && !strings.Contains(p.Err, transport.ErrClosed.Error()) { // closed, by either side: a normal end, said nothing of
			attrs = append(attrs, "err", p.Err)
		}
		if p.Transport == transport.StatsMetaRoCE {
			attrs = append(attrs, "targetRate", rateText(p.TargetRate), "paths", len(p.Paths))
		}
		log.Info("gocoll: traffic", attrs...)
		for _, pa := range p.Paths {
			if pa.PacketsSent+pa.PacketsRecv == 0 && pa.State == "good" {
				continue // an idle healthy path: nothing to show
			}
			log.Info("gocoll: path", "peer", p.Rank, "path", pa.Index, "state", pa.State,
				"bytes", sizeText(pa.BytesSent), "share", fmt.Sprintf("%.1f%%", 100*pa.Share),
				"packets", pa.PacketsSent, "resent", pa.Retransmits, "lost", pa.Lost, "timeouts", pa.Timeouts, "spurious", pa.SpuriousTimeouts,
				"srtt", pa.SRTT.Round(time.Microsecond), "window", sizeText(int64(pa.Window)), "windowRate", rateText(pa.WindowRate),
				"fabricSrtt", pa.FabricSRTT.Round(time.Microsecond), "fabricMinRtt", pa.FabricMinRTT.Round(time.Microsecond),
				"cutsDelay", pa.CutsDelay, "cutsLoss", pa.CutsLoss)
		}
	}
}

// sizeText writes n bytes with a binary unit: 512B, 1.5KiB, 3.0MiB.
func sizeText(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%dB", n)
	}
	f, u := float64(n)/1024, 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	return fmt.Sprintf("%.1f%ciB", f, units[u])
}

// rateText writes a rate in bytes/s as Mbit/s, or "-" for none.
func rateText(bps int64) string {
	if bps <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fMbit/s", float64(bps)*8/1e6)
}
