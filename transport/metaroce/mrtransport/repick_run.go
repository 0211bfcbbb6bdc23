package mrtransport

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

// retireAfter is, by default (engine.retireAfter), how long a replaced path socket stays open, and read,
// after its path moved: the peers keep sending to it until the move's
// control message reaches them (a few round trips), and a datagram to a
// closed port would be answered by a port unreachable, which they take
// for this rank's death.
const retireAfter = 10 * time.Second

// repicker is an endpoint's port re-picking state (see repick.go). Its
// fields are guarded by eng.mu.
type repicker struct {
	p       RepickPolicy
	pacer   repickPacer
	windows map[int][][]pathSample // by peer rank, by path: the last samples, oldest first
	stats   []metaroce.PathStats   // scratch
	count   int64                  // re-picks made
}

// repickOn reports whether cfg re-picks ports: not with Repick.Off, on
// loopback, or with fixed ports (ListenAddr's port).
func repickOn(cfg Config) bool {
	return !cfg.Repick.Off && !cfg.loopback() && cfg.ListenAddr.Port() == 0
}

// startRepick starts the sampling goroutine, which ends when the endpoint
// closes. It is called once, by Listen.
func (e *Endpoint) startRepick() {
	p := e.cfg.Repick.withDefaults()
	e.eng.lock()
	e.repick = &repicker{p: p, pacer: newRepickPacer(p, e.eng.now()), windows: make(map[int][][]pathSample)}
	e.eng.unlock()
	go func() {
		t := time.NewTicker(p.Sample)
		defer t.Stop()
		for {
			select {
			case <-e.closing:
				return
			case <-t.C:
				if path, ok := e.repickSample(); ok {
					if err := e.repickPath(path); err != nil {
						e.log.Warn("mrtransport: path port not re-picked", "path", path, "err", err)
					}
				}
			}
		}
	}()
}

// repickSample takes one sample of every connection's paths and returns
// the path to re-pick, if the policy names one and the pacer allows it.
func (e *Endpoint) repickSample() (int, bool) {
	e.eng.lock()
	defer e.eng.unlock()
	rp := e.repick
	if e.closed || rp == nil {
		return 0, false
	}
	pick, picked := -1, false
	total := 0.0
	for _, p := range e.peers {
		if p == nil || !p.up || p.conn == 0 {
			continue
		}
		var ok bool
		_, rp.stats, ok = e.eng.core.ConnStats(p.conn, rp.stats[:0])
		if !ok {
			continue
		}
		w := rp.windows[p.rank]
		if len(w) != len(rp.stats) {
			w = make([][]pathSample, len(rp.stats))
		}
		full := true
		for i, ps := range rp.stats {
			w[i] = append(w[i], pathSample{BytesAcked: ps.BytesAcked, Lost: ps.PacketsLost, ECN: ps.ECNEchoed, Queue: max(ps.SRTT-ps.MinRTT, 0)})
			if len(w[i]) > rp.p.Window {
				w[i] = append(w[i][:0], w[i][len(w[i])-rp.p.Window:]...)
			}
			if len(w[i]) < rp.p.Window {
				full = false
				continue
			}
			total += summarise(w[i]).rate
		}
		rp.windows[p.rank] = w
		if full && !picked {
			pick, picked = pickRepick(w, rp.p)
		}
	}
	if !picked || !rp.pacer.allow(e.eng.now(), total) {
		return 0, false
	}
	rp.pacer.made(e.eng.now(), total)
	return pick, true
}

// repickPath re-opens path's socket on another port: from PortRange if
// set, else an ephemeral one. The new socket takes the path's writes at
// once and gets a reader; the peers are told the new port (a path move);
// the old socket is read until retireAfter, then closed. The samples of
// the path start again.
func (e *Endpoint) repickPath(path int) error {
	eng := e.eng
	bind := e.binds[path]
	var s PathSocket
	var err error
	if e.cfg.PortRange.IsZero() {
		s, err = e.cfg.OpenSocket(path, netip.AddrPortFrom(bind.addr, 0))
	} else {
		taken := make(map[uint16]bool)
		for i := range eng.socks {
			taken[eng.sock(i).LocalAddr().Port()] = true
		}
		s, err = openInRange(e.cfg.OpenSocket, path, bind.addr, e.cfg.PortRange, taken)
	}
	if err != nil {
		return err
	}
	eng.lock()
	if e.closed || eng.closed {
		eng.unlock()
		_ = s.Close()
		return fmt.Errorf("mrtransport: closed")
	}
	old := eng.sock(path)
	eng.cur[path].Store(&sockRef{s})
	eng.retiring = append(eng.retiring, old)
	eng.readers.Add(1)
	go eng.readLoop(path, s)
	now := eng.now()
	msg := appendMove(nil, path, s.LocalAddr().Port())
	for _, p := range e.peers {
		if p != nil && p.up {
			e.sendCtrl(now, p, msg)
		}
	}
	if rp := e.repick; rp != nil {
		for _, w := range rp.windows {
			if path < len(w) {
				w[path] = w[path][:0]
			}
		}
		rp.count++
	}
	e.log.Info("mrtransport: path port re-picked", "path", path, "from", old.LocalAddr(), "to", s.LocalAddr())
	eng.process(now)
	eng.unlock()
	eng.spinAdd(path, s)
	time.AfterFunc(eng.retireAfter, func() { eng.retire(old) })
	return nil
}

// retire closes a replaced socket, unless stop has.
func (e *engine) retire(s PathSocket) {
	e.mu.Lock()
	for i, r := range e.retiring {
		if r == s {
			e.retiring = append(e.retiring[:i], e.retiring[i+1:]...)
			e.mu.Unlock()
			_ = s.Close()
			return
		}
	}
	e.mu.Unlock()
}

// spinAdd lets spinning waiters read path's new socket s. The caller
// does not hold mu (a spinning waiter holds the spinner's lock while it
// takes mu).
func (e *engine) spinAdd(path int, s PathSocket) {
	sp := e.spin
	u, ok := s.(*udpioSocket)
	if sp == nil || !ok {
		return
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.poller.Add(path, u.s) == nil {
		sp.readers[path] = udpio.NewTryReader(u.s, spinBatch)
	}
}
