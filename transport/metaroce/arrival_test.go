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

// lateRun pumps 256 KiB messages over one 100 Gb/s path of 5 us each way
// for 20 ms of virtual time, read late by up to maxLate, and returns the
// sender's path stats and the messages delivered.
func lateRun(t *testing.T, maxLate time.Duration, noStamp bool) (metaroce.PathStats, int) {
	s := newSim(t, 15, 2, metaroce.Config{Paths: 1, MaxDatagram: 9000})
	s.pair(0, 1, simfabric.LinkConfig{Rate: 12.5e9, Delay: 5 * time.Microsecond, QueueBytes: 4 << 20})
	ca, cb := s.connect(0, 1)
	s.rx = newLateReader(15, maxLate, noStamp)
	p := startPump(s, ca, cb, 256<<10, 4)
	s.runTo(s.fab.Now() + 20*time.Millisecond)
	_, ps := s.pathStats(0, ca)
	return ps[0], p.done
}

// TestArrivalTimesExcludeLateReads: with reads late by up to 500 us on a
// path of 10 us RTT that no queue builds on, the RTT samples taken from
// the datagrams' arrival times stay near the fabric's and the delay signal
// never cuts the window; when the late reads count as the network's (no
// arrival times), the RTT is many times longer and the window is cut.
// What is delivered is only logged: a sender whose ACKs wait in its own
// socket while its timer runs on time may time out spuriously either way.
func TestArrivalTimesExcludeLateReads(t *testing.T) {
	const late = 500 * time.Microsecond
	base, _ := lateRun(t, 0, false)
	stamped, doneStamped := lateRun(t, late, false)
	unstamped, doneUnstamped := lateRun(t, late, true)
	t.Logf("base: srtt %v min %v cwnd %d", base.SRTT, base.MinRTT, base.Cwnd)
	for _, r := range []struct {
		name string
		ps   metaroce.PathStats
		done int
	}{{"arrival times", stamped, doneStamped}, {"read times", unstamped, doneUnstamped}} {
		t.Logf("%s: srtt %v min %v cwnd %d delay cuts %d timeouts %d spurious %d messages %d", r.name, r.ps.SRTT,
			r.ps.MinRTT, r.ps.Cwnd, r.ps.CutsDelay, r.ps.Timeouts, r.ps.SpuriousTimeouts, r.done)
	}
	require.Less(t, stamped.SRTT, 2*base.SRTT, "the smoothed RTT counts the late reads")
	require.Less(t, stamped.MinRTT, unstamped.MinRTT/4, "the least RTT counts the late reads")
	require.Greater(t, unstamped.SRTT, 4*base.SRTT, "the reads were not late")
	require.Zero(t, stamped.CutsDelay, "late reads taken for a queue")
	require.NotZero(t, unstamped.CutsDelay, "late reads counted as the network's cut no window: the test shows nothing")
}
