package metaroce_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
	"github.com/stretchr/testify/require"
)

// lateReader is a sim's reader on a busy host: the datagrams that arrive
// wait in the socket until it wakes, after a pseudo-random 0 to maxLate
// since its last wake; it then hands them all to their endpoints, with
// their arrival times (HandleDatagramAt, as a driver with kernel receive
// timestamps) unless noStamp (HandleDatagram at the read: the time spent
// in the socket counts as the network's).
type lateReader struct {
	maxLate time.Duration
	noStamp bool
	rng     *rand.Rand
	wake    time.Duration
	queue   []simfabric.Delivery
}

func newLateReader(seed uint64, maxLate time.Duration, noStamp bool) *lateReader {
	return &lateReader{maxLate: maxLate, noStamp: noStamp, rng: rand.New(rand.NewPCG(seed, 1))}
}

// next returns when the reader wakes, if anything waits for it (a nil
// reader never does).
func (r *lateReader) next() (time.Duration, bool) {
	if r == nil || len(r.queue) == 0 {
		return 0, false
	}
	return r.wake, true
}

// read hands over what waits if the reader is awake at now, and sets its
// next wake.
func (r *lateReader) read(s *sim, now time.Duration) {
	if r == nil || len(r.queue) == 0 || now < r.wake {
		return
	}
	for _, d := range r.queue {
		ep := s.eps[d.To]
		if r.noStamp {
			ep.HandleDatagram(now, s.index[d.Path], d.CE, d.Data)
		} else {
			ep.HandleDatagramAt(now, d.At, s.index[d.Path], d.CE, d.Data)
		}
	}
	clear(r.queue)
	r.queue = r.queue[:0]
	r.wake = now + time.Duration(r.rng.Int64N(int64(r.maxLate)+1))
	for i := range s.eps {
		s.flush(i)
	}
}

// lateSeed seeds the late reader's and the sim's pseudo-random choices.
const lateSeed = 15

// lateRun pumps 256 KiB messages over one path of rate bytes/s and 5 us
// each way for 20 ms of virtual time, read late by up to maxLate, and
// returns the sender's path stats and the messages delivered.
func lateRun(t *testing.T, rate int64, maxLate time.Duration, noStamp bool) (metaroce.PathStats, int) {
	return lateRunSeed(t, lateSeed, rate, maxLate, noStamp)
}

// lateRunSeed is lateRun with the given seed.
func lateRunSeed(t *testing.T, seed int64, rate int64, maxLate time.Duration, noStamp bool) (metaroce.PathStats, int) {
	s := newSim(t, seed, 2, metaroce.Config{Paths: 1, MaxDatagram: 9000})
	s.pair(0, 1, simfabric.LinkConfig{Rate: rate, Delay: 5 * time.Microsecond, QueueBytes: 4 << 20})
	ca, cb := s.connect(0, 1)
	s.rx = newLateReader(uint64(seed), maxLate, noStamp)
	p := startPump(s, ca, cb, 256<<10, 4)
	s.runTo(s.fab.Now() + 20*time.Millisecond)
	_, ps := s.pathStats(0, ca)
	return ps[0], p.done
}

// TestArrivalTimesExcludeLateReads: with reads late by up to 500 us on a
// 100 Gbit/s path of 10 us RTT, the fabric RTT (the delay signal's) taken
// from the datagrams' arrival times has its minimum at the fabric's and
// the delay signal never cuts the window, while the full RTT (timers,
// windows) covers the late reads; when the late reads count as the
// network's (no arrival times), the least RTT is many times longer and the
// window is cut.
func TestArrivalTimesExcludeLateReads(t *testing.T) {
	const late = 500 * time.Microsecond
	t.Logf("seed %d", lateSeed)
	base, _ := lateRun(t, 12.5e9, 0, false)
	stamped, doneStamped := lateRun(t, 12.5e9, late, false)
	unstamped, doneUnstamped := lateRun(t, 12.5e9, late, true)
	t.Logf("base: srtt %v min %v fabric %v cwnd %d", base.SRTT, base.MinRTT, base.FabricSRTT, base.Cwnd)
	for _, r := range []struct {
		name string
		ps   metaroce.PathStats
		done int
	}{{"arrival times", stamped, doneStamped}, {"read times", unstamped, doneUnstamped}} {
		t.Logf("%s: srtt %v min %v fabric srtt %v min %v cwnd %d delay cuts %d timeouts %d spurious %d messages %d",
			r.name, r.ps.SRTT, r.ps.MinRTT, r.ps.FabricSRTT, r.ps.FabricMinRTT, r.ps.Cwnd, r.ps.CutsDelay,
			r.ps.Timeouts, r.ps.SpuriousTimeouts, r.done)
	}
	require.Less(t, stamped.FabricMinRTT, 2*base.FabricMinRTT, "the fabric's least RTT counts the late reads")
	require.Less(t, stamped.FabricMinRTT, unstamped.FabricMinRTT/4, "the fabric's least RTT counts the late reads")
	require.Greater(t, stamped.SRTT, 4*base.SRTT, "the full RTT leaves the late reads out")
	require.Greater(t, unstamped.SRTT, 4*base.SRTT, "the reads were not late")
	require.Zero(t, stamped.CutsDelay, "late reads taken for a queue")
	require.NotZero(t, unstamped.CutsDelay, "late reads counted as the network's cut no window: the test shows nothing")
}

// TestArrivalTimesLateReadsDelivery: with reads late by up to 500 us and
// timers on time, a sender given arrival times delivers at least what it
// delivers without them: its RTO and window follow the full RTT, which
// includes the late reads, and only its delay signal leaves them out.
// Before the two views (one RTT ending at the arrival) seed 15 delivered 33
// messages against 176 at 100 Gbit/s (spurious timeouts while its ACKs
// waited in its socket) and 47 against 69 at 10 Gbit/s (a window sized by
// the fabric's delay for a loop with both readers' lateness); seeds 16-19
// are review C's. Not every seed gains: at 100 Gbit/s seeds 20 and 21
// deliver 47 against 100 and 41 against 83, a spurious timeout in the
// first millisecond (the first full RTT sample taken when both reads were
// prompt) ending slow start; over seeds 15-24, 2126 against 865 messages at
// 100 Gbit/s and 680 against 348 at 10 Gbit/s.
func TestArrivalTimesLateReadsDelivery(t *testing.T) {
	const late = 500 * time.Microsecond
	for _, tc := range []struct {
		name string
		rate int64
		seed int64
	}{
		{"100 Gbit/s seed 15", 12.5e9, 15}, {"100 Gbit/s seed 16", 12.5e9, 16}, {"100 Gbit/s seed 17", 12.5e9, 17},
		{"100 Gbit/s seed 18", 12.5e9, 18}, {"100 Gbit/s seed 19", 12.5e9, 19},
		{"10 Gbit/s seed 15", 1.25e9, 15}, {"10 Gbit/s seed 16", 1.25e9, 16}, {"10 Gbit/s seed 17", 1.25e9, 17},
		{"10 Gbit/s seed 18", 1.25e9, 18}, {"10 Gbit/s seed 19", 1.25e9, 19},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stamped, doneStamped := lateRunSeed(t, tc.seed, tc.rate, late, false)
			unstamped, doneUnstamped := lateRunSeed(t, tc.seed, tc.rate, late, true)
			for _, r := range []struct {
				name string
				ps   metaroce.PathStats
				done int
			}{{"arrival times", stamped, doneStamped}, {"read times", unstamped, doneUnstamped}} {
				t.Logf("%s: messages %d srtt %v fabric srtt %v cwnd %d delay cuts %d timeouts %d spurious %d",
					r.name, r.done, r.ps.SRTT, r.ps.FabricSRTT, r.ps.Cwnd, r.ps.CutsDelay, r.ps.Timeouts,
					r.ps.SpuriousTimeouts)
			}
			require.NotZero(t, doneUnstamped, "nothing delivered: the run shows nothing")
			require.GreaterOrEqual(t, doneStamped, doneUnstamped, "arrival times deliver less")
		})
	}
}
