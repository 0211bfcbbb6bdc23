package metaroce_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
)

// TestFigureGoodputByRTT prints one connection's goodput as a fraction of
// capacity (4 paths of 200 Mbit/s, 4 MiB queues, loss on every link in
// both directions) at round trips of 100 µs to 100 ms, with loss, and
// over paths of 2 and 20 ms together: steady state (10% to 90% of the
// bytes) of 32 MiB, of 128 MiB at 20 ms and beyond with 9000-byte
// datagrams, where slow start takes longer, and of 64 MiB with 1452-byte
// ones. Run with -v to see the table.
func TestFigureGoodputByRTT(t *testing.T) {
	type row struct {
		rtts     []time.Duration
		loss     float64
		datagram int
		floor    float64 // the least goodput, as a fraction of capacity, that passes
	}
	ms := time.Millisecond
	mixed := []time.Duration{2 * ms, 20 * ms, 2 * ms, 20 * ms}
	var rows []row
	for _, rtt := range []time.Duration{100 * time.Microsecond, 2 * ms, 20 * ms, 100 * ms} {
		rows = append(rows, row{[]time.Duration{rtt}, 0, 9000, 0.85}, row{[]time.Duration{rtt}, 0.01, 9000, 0.6},
			row{[]time.Duration{rtt}, 0.05, 9000, 0.3})
	}
	rows = append(rows, row{[]time.Duration{20 * ms}, 0, 1452, 0.85}, row{[]time.Duration{100 * ms}, 0, 1452, 0.8},
		row{mixed, 0, 9000, 0.85}, row{mixed, 0.01, 9000, 0.8})
	for i, r := range rows {
		name := fmt.Sprintf("rtt=%v/loss=%g/datagram=%d", r.rtts, r.loss, r.datagram)
		t.Run(name, func(t *testing.T) {
			seed := int64(300 + i)
			s := newSim(t, seed, 2, metaroce.Config{Paths: 4, MaxDatagram: r.datagram})
			s.wanPair(wanLinks(4, r.loss, r.rtts...))
			ca, cb := s.connect(0, 1)
			count := 8 // 32 MiB
			switch {
			case r.datagram < 9000:
				count = 16 // six times the packets per byte
			case r.rtts[len(r.rtts)-1] >= 20*ms:
				count = 32
			}
			steady, whole := stream(s, 0, 1, ca, cb, count, 4<<20, 5*time.Minute)
			_, ps := s.pathStats(0, ca)
			lost, sent, timeouts := int64(0), int64(0), int64(0)
			for _, p := range ps {
				lost += p.PacketsLost
				sent += p.PacketsSent
				timeouts += p.Timeouts
			}
			capacity := 4.0 * labRate
			t.Logf("%-34s goodput %5.1f%% of capacity (whole transfer %5.1f%%); %d of %d packets lost, %d timeouts; srtt %v cwnd %d",
				name, 100*steady/capacity, 100*whole/capacity, lost, sent, timeouts, ps[0].SRTT.Round(time.Microsecond), ps[0].Cwnd)
			if steady/capacity < r.floor {
				t.Errorf("goodput %.1f%% of capacity, below %.0f%% (seed %d)", 100*steady/capacity, 100*r.floor, seed)
			}
		})
	}
}
