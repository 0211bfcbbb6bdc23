package mrtransport

import (
	"bufio"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
)

// The send sampler (Config.SendSamples): a diagnostic of what holds a
// connection's posted data back over time. Every sampleEvery, a
// goroutine takes the engine's lock and records, for each connection
// with bytes posted and unsent or in flight, the core's SendState (the
// limit, the unsent and in-flight bytes, the windows, pacing, the peer's
// target rate and credit) beside the sampler's own lateness: how long
// after its tick it held the lock (a descheduled process, or a driver
// holding the lock), and when the engine's timer is due (overdue: a
// timer goroutine not run, the CPU). Close writes the samples to the
// file. Off (SendSamples ""), nothing runs and nothing is kept.

// sampleEvery is the sampler's period.
const sampleEvery = time.Millisecond

// maxSamples bounds the samples kept (about 100 bytes each); later ones
// are counted in dropped, not kept.
const maxSamples = 1 << 20

// SendSample is one connection's sending state at one tick of the send
// sampler.
type SendSample struct {
	At   time.Duration // engine time (since the endpoint's start)
	Peer int           // the peer's rank
	metaroce.SendState
	// Sent is the payload bytes the connection's paths sent so far,
	// resends included.
	Sent int64
	// Lag is how long after its tick the sampler held the engine's lock;
	// Timer how long until the deadline the engine's timer is set for
	// (negative: overdue, the timer's goroutine not yet run), Armed false
	// if none is set. A late sampler and an overdue timer read CPU
	// starvation; a connection ready to send with no timer armed and no
	// input coming would be a stall of the engine's.
	Lag, Timer time.Duration
	Armed      bool
	// SRTT and FabricSRTT are the connection's paths' smoothed full and
	// fabric RTTs, averaged over the paths that have them: the full one
	// less the fabric one is what the hosts' scheduling (the peer's
	// socket reads above all) adds to the loop (metaroce.PathStats).
	SRTT, FabricSRTT time.Duration
	// Unwritten is the endpoint's datagrams polled from the core and not
	// yet written (a writer between its poll and its system call, or
	// descheduled there): in flight for the core, still in this host.
	Unwritten int64
}

// sampler runs the send sampler.
type sampler struct {
	path    string
	once    sync.Once // closes stop
	stop    chan struct{}
	done    chan struct{}
	samples []SendSample // guarded by eng.mu until done is closed
	dropped int64
	paths   []metaroce.PathStats // ConnStats' buffer
}

// startSampler starts the send sampler if Config.SendSamples names a
// file: the rank's is that name, a dot and the rank.
func (e *Endpoint) startSampler() {
	if e.cfg.SendSamples == "" {
		return
	}
	s := &sampler{path: fmt.Sprintf("%s.%d", e.cfg.SendSamples, e.cfg.Rank), stop: make(chan struct{}), done: make(chan struct{})}
	e.sampler = s
	go e.runSampler(s)
}

func (e *Endpoint) runSampler(s *sampler) {
	defer close(s.done)
	tk := time.NewTicker(sampleEvery)
	defer tk.Stop()
	for {
		select {
		case <-s.stop:
			return
		case tick := <-tk.C:
			e.eng.lock()
			held := time.Now()
			e.sampleOnce(s, e.eng.nowAt(held), held.Sub(tick))
			e.eng.unlock()
		}
	}
}

// sampleOnce records each busy connection's state at now. The caller
// holds eng.mu.
func (e *Endpoint) sampleOnce(s *sampler, now, lag time.Duration) {
	a := e.eng.armed
	st := &e.eng.st
	unwritten := st.dataPolled.Load() + st.acksPolled.Load() + st.otherPolled.Load() -
		st.noRoute.Load() - st.datagramsWritten.Load() - st.writeErrors.Load()
	for _, p := range e.peers {
		if p == nil || p.conn == 0 {
			continue
		}
		st, ok := e.eng.core.SendState(now, p.conn)
		if !ok || (st.Unsent == 0 && st.Inflight == 0 && st.Resends == 0) {
			continue
		}
		if len(s.samples) >= maxSamples {
			s.dropped++
			continue
		}
		var sent int64
		var srtt, fab time.Duration
		n, nf := 0, 0
		_, s.paths, _ = e.eng.core.ConnStats(p.conn, s.paths[:0])
		for _, ps := range s.paths {
			sent += ps.BytesSent
			if ps.SRTT > 0 {
				srtt, n = srtt+ps.SRTT, n+1
			}
			if ps.FabricSRTT > 0 {
				fab, nf = fab+ps.FabricSRTT, nf+1
			}
		}
		srtt /= time.Duration(max(n, 1))
		fab /= time.Duration(max(nf, 1))
		s.samples = append(s.samples, SendSample{At: now, Peer: p.rank, SendState: st, Sent: sent, Lag: lag,
			Timer: a - now, Armed: a >= 0, Unwritten: max(unwritten, 0),
			SRTT: srtt, FabricSRTT: fab})
	}
}

// SendSamples returns a copy of the send sampler's samples so far (nil
// when Config.SendSamples is off).
func (e *Endpoint) SendSamples() []SendSample {
	if e.sampler == nil {
		return nil
	}
	e.eng.lock()
	defer e.eng.unlock()
	return append([]SendSample(nil), e.sampler.samples...)
}

// stopSampler stops the sampler's goroutine; Close calls it before it
// takes the engine's lock. The caller does not hold eng.mu.
func (e *Endpoint) stopSampler() {
	if s := e.sampler; s != nil {
		s.once.Do(func() { close(s.stop) })
		<-s.done
	}
}

// sampleHeader names writeSamples' columns: times in microseconds (at_us
// since the engine's start, which the second line gives in Unix
// nanoseconds), rates in bytes/s, sizes in bytes.
const sampleHeader = "# rank at_us peer limit unsent resends inflight cwnd slowstart wincap pacerate pacewait_us peerrate credit sent lag_us timer_us armed unwritten srtt_us fabsrtt_us"

// writeSamples writes the sampler's samples to its file, one line per
// sample (sampleHeader). Close calls it after the engine stopped.
func (e *Endpoint) writeSamples() error {
	s := e.sampler
	if s == nil {
		return nil
	}
	f, err := os.Create(s.path)
	if err != nil {
		return fmt.Errorf("mrtransport: send samples: %w", err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "%s\n# start_unixns %d dropped %d every_us %d\n", sampleHeader, e.eng.start.UnixNano(), s.dropped,
		sampleEvery.Microseconds())
	us := func(d time.Duration) int64 { return d.Microseconds() }
	for _, x := range s.samples {
		fmt.Fprintf(w, "%d %d %d %s %d %d %d %d %d %d %.0f %d %d %d %d %d %d %d %d %d %d\n", e.cfg.Rank, us(x.At), x.Peer, x.Limit,
			x.Unsent, x.Resends, x.Inflight, x.Cwnd, x.SlowStart, x.WindowCap, x.PaceRate, us(x.PaceWait),
			x.PeerRate, x.Credit, x.Sent, us(x.Lag), us(x.Timer), b2i(x.Armed), x.Unwritten, us(x.SRTT),
			us(x.FabricSRTT))
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return fmt.Errorf("mrtransport: send samples: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("mrtransport: send samples: %w", err)
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
