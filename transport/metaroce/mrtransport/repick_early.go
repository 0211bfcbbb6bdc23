package mrtransport

import "time"

// repickPhase runs the early phase's clock (earlyClock) on the data the
// endpoint's connections carried either way since the last sample, and
// ends the phase once its busy time reaches earlyLength: the windows and
// peaks (taken at the early sampling period) start again, and so does the
// pacer, at the steady policy. The caller holds eng.mu.
func (e *Endpoint) repickPhase(now time.Duration) {
	rp := e.repick
	if !rp.early {
		return
	}
	var carried int64
	for _, p := range e.peers {
		if p == nil || !p.up || p.conn == 0 {
			continue
		}
		var ok bool
		_, rp.stats, ok = e.eng.core.ConnStats(p.conn, rp.stats[:0])
		for _, ps := range rp.stats {
			if ok {
				carried += ps.BytesAcked + ps.PacketsRecv
			}
		}
	}
	started := rp.earlyClock.started
	busy := rp.earlyClock.tick(now, carried)
	if !rp.earlyClock.started {
		return
	}
	if !started {
		e.log.Debug("mrtransport: early re-pick phase", "busyFor", earlyLength(rp.base, rp.rtt))
	}
	if busy < earlyLength(rp.base, rp.rtt) {
		return
	}
	rp.p, rp.early = rp.base, false
	rp.pacer = newRepickPacer(rp.p, now)
	rp.lastOld, rp.lastMore = nil, nil
	rp.crowd = crowdMove{}
	clear(rp.windows)
	clear(rp.peaks)
}

// earlyClock measures the early phase in busy time: from the first
// sample that sees data carried (either way, on any connection), the
// sampling intervals in which some connection carried data. Idle time
// does not count: a job's first bulk data often follows a few small
// messages (a world's set-up) and a pause, and the phase is for the
// paths' placement under load, which the small messages do not show.
// In virtual time, a receiving connection whose bulk data came 2.5 s
// after such messages, starting on 3 of its 4 links, still left one
// unused 2.8 s into the bulk data in 5 of 8 seeds (the steady policy's
// pace) before the clock counted busy time only; 1 of 8 since
// (TestRepickEarlyPhaseWaitsForData).
type earlyClock struct {
	started bool          // some sample has seen data
	busy    time.Duration // busy time since
	last    time.Duration // the time of the last sample
	carried int64         // the data counters' sum at the last sample
}

// tick records a sample at now, carried being the sum of the endpoint's
// data counters (bytes acknowledged and packets received, on every
// connection), and returns the busy time: the interval since the last
// sample counts if carried changed over it (the interval before the
// first data does not).
func (c *earlyClock) tick(now time.Duration, carried int64) time.Duration {
	if carried != c.carried {
		if c.started {
			c.busy += now - c.last
		}
		c.started = true
	}
	c.carried, c.last = carried, now
	return c.busy
}

// earlySample is the early phase's sampling period on paths whose least
// RTTs are at most rtt: EarlySample, but no faster than every two round
// trips (a queue's change over less than a round trip or two is not a
// signal of its own), at most Sample (at 2 × 50 ms, the steady pace).
func earlySample(p RepickPolicy, rtt time.Duration) time.Duration {
	return min(max(p.EarlySample, 2*rtt), p.Sample)
}

// earlyLength is how long the early phase lasts on such paths: Early,
// longer in proportion where the phase samples slower than EarlySample,
// so that it makes as many decisions at any RTT (its windows fill as many
// samples): at most Early × Sample / EarlySample (10 s by default, from
// 50 ms RTT). On the simulated ECMP fabric at 25 ms one way (16 seeds,
// 16 messages of 4 MiB in flight, bench/ecmp_sim.sh), a 2 s phase left
// two connections with a link unused for 7.4 and 7.8 s; this one finds
// every link within 4.2 s.
func earlyLength(p RepickPolicy, rtt time.Duration) time.Duration {
	return time.Duration(float64(p.Early) * float64(earlySample(p, rtt)) / float64(p.EarlySample))
}
