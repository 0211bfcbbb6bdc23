package metaroce_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

// runJitterLoss runs the lab's 5 % loss row in the simulated fabric: one
// connection of 8 paths over 4 links of 200 Mbit/s (2 paths a link), 2 ms
// one way, queues of 20 ms of the rate, loss and a uniform per-packet
// jitter of [0, jitter] (no reordering) on every link in both directions,
// 4 messages of 4 MiB kept in flight. It returns the goodput from 1 s to
// 8 s as a fraction of capacity and the per-path counters. extraDelay
// lengthens every link's delay (a timing change only: bench/jitterloss_sweep.sh).
func runJitterLoss(t *testing.T, seed int64, r jitterLossRow, extraDelay time.Duration) (float64, string) {
	s := newSim(t, seed, 2, metaroce.Config{Paths: 8, MaxDatagram: 9000})
	s.txTick = r.tick
	cfg := simfabric.LinkConfig{Rate: labRate, Delay: 2*time.Millisecond + extraDelay, Jitter: r.jitter, Loss: r.loss,
		LossTrain: r.train, QueueBytes: queueOf(labRate, shallowQueue)}
	s.labLinks(cfg)
	ca, cb := s.connect(0, 1)
	t0 := s.fab.Now()
	startFlow(s, 0, 1, ca, cb, 4<<20, 4)
	s.runTo(t0 + time.Second)
	b0 := s.arrived(1, cb)
	s.runTo(t0 + 8*time.Second)
	rate := float64(s.arrived(1, cb)-b0) / 7
	_, ps := s.pathStats(0, ca)
	_, _, per := pathSummary(ps)
	return rate / (4 * labRate), per
}

// TestFigureJitterLoss: at 5 % loss with 0-4 ms of jitter per packet (the
// lab's hosts' scheduling, more than the 2 ms delay target), a connection
// keeps >= 85 % of capacity on each seed: jitter that leaves some packets
// fast in every round trip is no queue, and must not cut the windows to a
// few packets, where 5 % loss means timeouts. Also judged: jitter alone,
// loss alone, and loss with a sender that transmits in bursts once a tick;
// printed only: the lab's old loss of whole GSO trains. Under -short, seeds
// 1 and 10 of the jitter and loss row and seed 1 of the 1 ms tick row
// (5-10 s); all rows (~100 s): go test -run TestFigureJitterLoss -v
// ./transport/metaroce/
func TestFigureJitterLoss(t *testing.T) {
	rows := jitterLossRows()
	seeds := []int64{1, 2, 3}
	if testing.Short() {
		rows, seeds = []jitterLossRow{rows[0], rows[3]}, seeds[:1]
		rows[0].more = rows[0].more[:1]
	}
	for _, r := range rows {
		for _, seed := range append(slices.Clip(seeds), r.more...) {
			g, per := runJitterLoss(t, seed, r, 0)
			what := fmt.Sprintf("loss %.0f%% jitter 0-%v", 100*r.loss, r.jitter)
			if r.tick > 0 {
				what += fmt.Sprintf(" tick %v trains of %d", r.tick, max(r.train, 1))
			}
			t.Logf("%s seed %d: goodput %.1f%% of capacity;%s", what, seed, 100*g, per)
			if g < r.floor {
				t.Errorf("%s: goodput %.1f%% of capacity, want >= %.0f%% (seed %d)", what, 100*g, 100*r.floor, seed)
			}
		}
	}
}

// jitterLossRow is one row of TestFigureJitterLoss: random loss, jitter, the
// goodput floor judged (0: printed only), lost trains of up to train
// datagrams, a sender that transmits once a tick (0: at once), and seeds
// judged beyond the common ones.
type jitterLossRow struct {
	loss   float64
	jitter time.Duration
	floor  float64
	train  int
	tick   time.Duration
	more   []int64
}

// jitterLossRows is TestFigureJitterLoss's rows (and
// TestJitterLossSweep's, by index).
func jitterLossRows() []jitterLossRow {
	ms := time.Millisecond
	// Seeds 10 and 41 of the first row collapsed to 82 % when the loss
	// classifier took the jitter's mean for a queue (see path.queueing).
	return []jitterLossRow{{0.05, 4 * ms, 0.85, 0, 0, []int64{10, 41}}, {0, 4 * ms, 0.85, 0, 0, nil}, {0.05, 0, 0.85, 0, 0, nil},
		// A sender that transmits once a ms or 0.5 ms (a loaded host's
		// wake-ups: each path's datagrams leave in bursts) with random loss
		// per datagram, as a wire after a NIC's segmentation loses them.
		{0.05, 0, 0.85, 1, ms, nil}, {0.05, 0, 0.85, 1, ms / 2, nil},
		// The same with whole trains of up to 7 datagrams lost at once,
		// as the lab lost them before its hosts segmented under loss
		// (see bench/results/lab/loss5/README.md): printed, not judged.
		// A train lost whole is 4 or more packets of a window of a few,
		// which lossRounds takes for heavy loss (a buffer overflowed
		// unseen); the loss ceiling it set cut by delay for floorWindow
		// (1 ms: 41 % over 60 seeds, min 27) until path.heavyCeiling
		// held such a ceiling near the floor to 128 RTTs (61 %, min 48).
		{0.05, 0, 0, 7, ms, nil}, {0.05, 0, 0, 7, ms / 2, nil}}
}

// TestJitterLossSweep runs one row of TestFigureJitterLoss over a range of
// seeds and prints each seed's goodput ("jitterloss seed S +Xus G", % of
// capacity) for bench/jitterloss_sweep.sh; it judges nothing and is
// skipped unless JITTERLOSS_SEEDS (FIRST-LAST) is set. JITTERLOSS_ROW is
// the row's index (default 0), JITTERLOSS_EXTRA_US lengthens every link's
// delay by that many µs (default 0).
func TestJitterLossSweep(t *testing.T) {
	span := os.Getenv("JITTERLOSS_SEEDS")
	if span == "" {
		t.Skip("JITTERLOSS_SEEDS (FIRST-LAST) unset: a sweep for bench/jitterloss_sweep.sh")
	}
	var first, last int64
	if _, err := fmt.Sscanf(span, "%d-%d", &first, &last); err != nil || first > last {
		t.Fatalf("JITTERLOSS_SEEDS=%q: want FIRST-LAST, FIRST <= LAST", span)
	}
	rows := jitterLossRows()
	row, extra := envInt(t, "JITTERLOSS_ROW", 0), envInt(t, "JITTERLOSS_EXTRA_US", 0)
	if row < 0 || row >= len(rows) || extra < 0 {
		t.Fatalf("JITTERLOSS_ROW=%d (0 to %d) or JITTERLOSS_EXTRA_US=%d (>= 0) out of range", row, len(rows)-1, extra)
	}
	for seed := first; seed <= last; seed++ {
		g, _ := runJitterLoss(t, seed, rows[row], time.Duration(extra)*time.Microsecond)
		fmt.Printf("jitterloss seed %d +%dus %.1f\n", seed, extra, 100*g)
	}
}

// envInt is the integer in environment variable name, def where it is
// unset; the test fails where it is not an integer.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: not an integer", name, v)
	}
	return n
}
