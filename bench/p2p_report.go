package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/gocoll/gocoll/collective"
	"github.com/gocoll/gocoll/transport"
)

// p2pRow is one interval of gocoll bench p2p, or (Kind "total") the
// whole run: what rank 0's connection to rank 1 did between Start and End
// (seconds from the start). The --json output is one p2pRow per line.
type p2pRow struct {
	Kind  string  `json:"kind"` // "interval" or "total"
	Start float64 `json:"start_s"`
	End   float64 `json:"end_s"`
	// Bytes are the message bytes whose sends completed (acknowledged
	// where the transport acknowledges), and GoodputMbps their rate: a
	// message counts when it completes, so one interval may be off by up
	// to the window, which the next makes up.
	Bytes       int64   `json:"bytes"`
	GoodputMbps float64 `json:"goodput_mbps"`
	// TargetMbps is the rate rank 1 last asked for (MetaRoCE; 0: none).
	TargetMbps float64 `json:"target_mbps"`
	// PathBytes are the payload bytes sent on the paths, resends
	// included: the sum of Paths' Bytes. Retransmits sums their resends.
	PathBytes   int64        `json:"path_bytes"`
	Retransmits int64        `json:"retransmits"`
	Paths       []p2pPathRow `json:"paths,omitempty"`
}

// p2pPathRow is one path over one interval: counters are the interval's,
// state, RTT and window those at its end.
type p2pPathRow struct {
	Path           int     `json:"path"`
	State          string  `json:"state"`
	Bytes          int64   `json:"bytes"`
	Share          float64 `json:"share"` // of the interval's PathBytes, 0 to 1
	Packets        int64   `json:"packets"`
	Retransmits    int64   `json:"retransmits"`
	Lost           int64   `json:"lost"`
	Timeouts       int64   `json:"timeouts"`
	Spurious       int64   `json:"spurious_timeouts"` // of Timeouts, those an ACK of the original later showed needless
	SRTTUs         float64 `json:"srtt_us"`
	Window         int     `json:"window_bytes"`
	WindowRateMbps float64 `json:"window_rate_mbps"`
}

// p2pDelta is the row of what happened between snapshots a (taken at
// from) and b (at to) of the statistics of one peer.
func p2pDelta(kind string, a, b transport.PeerStats, from, to time.Duration) p2pRow {
	r := p2pRow{Kind: kind, Start: from.Seconds(), End: to.Seconds(), Bytes: b.BytesSent - a.BytesSent,
		TargetMbps: mbps(float64(b.TargetRate))}
	if secs := (to - from).Seconds(); secs > 0 {
		r.GoodputMbps = mbps(float64(r.Bytes) / secs)
	}
	paths := make([]transport.PathStats, len(b.Paths))
	for i, p := range b.Paths {
		paths[i] = p
		if i < len(a.Paths) {
			was := a.Paths[i]
			paths[i].BytesSent -= was.BytesSent
			paths[i].PacketsSent -= was.PacketsSent
			paths[i].Retransmits -= was.Retransmits
			paths[i].Lost -= was.Lost
			paths[i].Timeouts -= was.Timeouts
			paths[i].SpuriousTimeouts -= was.SpuriousTimeouts
		}
	}
	transport.SetShares(paths)
	for _, p := range paths {
		r.PathBytes += p.BytesSent
		r.Retransmits += p.Retransmits
		r.Paths = append(r.Paths, p2pPathRow{Path: p.Index, State: p.State, Bytes: p.BytesSent, Share: p.Share,
			Packets: p.PacketsSent, Retransmits: p.Retransmits, Lost: p.Lost, Timeouts: p.Timeouts,
			Spurious: p.SpuriousTimeouts, SRTTUs: float64(p.SRTT.Nanoseconds()) / 1e3, Window: p.Window, WindowRateMbps: mbps(float64(p.WindowRate))})
	}
	return r
}

// mbps converts bytes/s to Mbit/s.
func mbps(bytesPerSec float64) float64 { return bytesPerSec * 8 / 1e6 }

// p2pReport writes gocoll bench p2p's table, or its JSON rows.
type p2pReport struct {
	w         io.Writer
	o         P2POptions
	placement string
}

func newP2PReport(w io.Writer, o P2POptions, placement string) *p2pReport {
	return &p2pReport{w: w, o: o, placement: placement}
}

func (t *p2pReport) begin() error {
	if t.o.JSON {
		return nil
	}
	o := t.o
	_, err := fmt.Fprintf(t.w, "# gocoll bench p2p: rank 0 -> rank 1 over %s, %s; %s messages, %d in flight; %v, every %v\n"+
		"#\n#  end(s)  goodput(Mbit/s)  target(Mbit/s)  sent(MiB)  resent\n"+
		"#    path  state    sent(MiB)   share  resent     lost  srtt(us)  window(KiB)  rate(Mbit/s)\n",
		o.Transport, t.placement, FormatSize(o.MsgBytes), o.inFlight(), o.Time, o.Interval)
	return err
}

func (t *p2pReport) row(r p2pRow) error {
	if t.o.JSON {
		return t.json(r)
	}
	sent, resent := "-", "-" // a transport without paths
	if len(r.Paths) > 0 {
		sent, resent = fmt.Sprintf("%.1f", mib(r.PathBytes)), fmt.Sprint(r.Retransmits)
	}
	if _, err := fmt.Fprintf(t.w, "%9.2f %16.1f %15s %10s %7s\n", r.End, r.GoodputMbps, rateCell(r.TargetMbps),
		sent, resent); err != nil {
		return err
	}
	for _, p := range r.Paths {
		if _, err := fmt.Fprintf(t.w, "%9d  %-7s %10.1f %6.1f%% %7d %8d %9.0f %12.1f %13s\n", p.Path, p.State, mib(p.Bytes),
			100*p.Share, p.Retransmits, p.Lost, p.SRTTUs, float64(p.Window)/1024, rateCell(p.WindowRateMbps)); err != nil {
			return err
		}
	}
	return nil
}

func (t *p2pReport) end(total p2pRow) error {
	if t.o.JSON {
		return t.json(total)
	}
	paths := ""
	if len(total.Paths) > 0 {
		paths = fmt.Sprintf("; %.1f MiB sent on %d paths, %d packets resent", mib(total.PathBytes), len(total.Paths), total.Retransmits)
	}
	_, err := fmt.Fprintf(t.w, "# total: %.1f MiB in %.2f s, goodput %.1f Mbit/s%s\n",
		mib(total.Bytes), total.End-total.Start, total.GoodputMbps, paths)
	return err
}

func (t *p2pReport) json(r p2pRow) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = t.w.Write(append(b, '\n'))
	return err
}

// rateCell shows a rate in Mbit/s, or "-" for none.
func rateCell(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

// sampler reports rank 0's statistics of its connection to a peer every
// interval, from its own goroutine.
type sampler struct {
	done chan struct{}
	err  error
}

// startSampler starts reporting to rep (nil: nothing to report) every
// o.Interval after start, until o.Time after it, and then the total: one
// row per interval of o.Time (the last one shorter where o.Interval does
// not divide it), each over the time that actually passed.
func startSampler(ctx context.Context, comm *collective.Comm, peer int, start time.Time, o P2POptions, rep *p2pReport) *sampler {
	s := &sampler{done: make(chan struct{})}
	if rep == nil {
		close(s.done)
		return s
	}
	first, _ := comm.Stats().Peer(peer)
	go func() {
		defer close(s.done)
		s.err = s.run(ctx, func() transport.PeerStats { p, _ := comm.Stats().Peer(peer); return p }, first, start, o, rep)
	}()
	return s
}

func (s *sampler) run(ctx context.Context, snap func() transport.PeerStats, first transport.PeerStats, start time.Time, o P2POptions, rep *p2pReport) error {
	if err := rep.begin(); err != nil {
		return err
	}
	prev, prevAt := first, time.Duration(0)
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	ticks := int((o.Time + o.Interval - 1) / o.Interval) // a late tick still makes its row
	for i := 1; i <= ticks; i++ {
		timer.Reset(time.Until(start.Add(min(o.Interval*time.Duration(i), o.Time))))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		cur, at := snap(), time.Since(start)
		if err := rep.row(p2pDelta("interval", prev, cur, prevAt, at)); err != nil {
			return err
		}
		prev, prevAt = cur, at
	}
	return rep.end(p2pDelta("total", first, prev, 0, prevAt))
}

// wait waits for the sampler to finish and returns its error.
func (s *sampler) wait() error {
	<-s.done
	return s.err
}
