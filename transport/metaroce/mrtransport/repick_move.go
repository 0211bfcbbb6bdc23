package mrtransport

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

// retireAfter is, by default (engine.retireAfter), how long a replaced path socket stays open, and read,
// after its path moved: the peers keep sending to it until the move's
// control message reaches them (a few round trips), and a datagram to a
// closed port would be answered by a port unreachable, which they take
// for this rank's death.
const retireAfter = 10 * time.Second

// undoRepick returns the last re-picked path, and those moved with it, to
// their old sockets, where these are still open, and reports whether it
// returned the first. The caller holds eng.mu.
func (e *Endpoint) undoRepick() bool {
	eng, rp := e.eng, e.repick
	old, more := rp.lastOld, rp.lastMore
	rp.lastOld, rp.lastMore = nil, nil
	for _, m := range more {
		if eng.unretire(m.s) {
			e.movePath(m.path, m.s, false)
			rp.respin = append(rp.respin, m)
		}
	}
	if !eng.unretire(old) {
		return false
	}
	e.movePath(rp.lastPath, old, false)
	rp.undone++
	rp.respin = append(rp.respin, movedSock{rp.lastPath, old})
	e.log.Info("mrtransport: path port re-pick undone: the send rate fell", "path", rp.lastPath, "more", len(more), "to", old.LocalAddr())
	return true
}

// repickPath re-opens path's socket on another port: from PortRange if
// set, else an ephemeral one; with the last re-pick (pickMore) if more,
// else as a re-pick of its own. The new socket takes the path's writes at
// once and gets a reader; the peers are told the new port (a path move);
// the old socket is read until retireAfter, then closed. The samples of
// the path start again.
func (e *Endpoint) repickPath(path int, more bool) error {
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
	old := e.movePath(path, s, true)
	if rp := e.repick; rp != nil {
		if more {
			rp.lastMore = append(rp.lastMore, movedSock{path, old})
		} else {
			rp.lastPath, rp.lastOld, rp.lastMore = path, old, nil
		}
		rp.count++
	}
	e.log.Info("mrtransport: path port re-picked", "path", path, "from", old.LocalAddr(), "to", s.LocalAddr())
	eng.unlock()
	eng.spinAdd(path, s)
	return nil
}

// movePath makes s path's socket, starting a reader for it if read (an
// undo's socket has one), and tells the peers its port; the old socket,
// which it returns, is read until retireAfter, then closed. The samples of
// the path start again. The caller holds eng.mu.
func (e *Endpoint) movePath(path int, s PathSocket, read bool) PathSocket {
	eng := e.eng
	old := eng.sock(path)
	eng.cur[path].Store(&sockRef{s})
	eng.retireLater(old)
	if read && eng.coalesce == 0 { // else the endpoint reader reads it (spinAdd)
		eng.readers.Add(1)
		go eng.readLoop(path, s)
	}
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
	}
	eng.process(now)
	return old
}

// retiree is a replaced socket, open until its retirement (id) is due.
type retiree struct {
	s  PathSocket
	id uint64
}

// retireLater keeps s open and read until retireAfter, then closes it,
// unless it is taken back (unretire) first. The caller holds mu.
func (e *engine) retireLater(s PathSocket) {
	e.retireSeq++
	id := e.retireSeq
	e.retiring = append(e.retiring, retiree{s, id})
	time.AfterFunc(e.retireAfter, func() { e.retire(id) })
}

// unretire takes s back from the retiring sockets and reports whether it
// was still there (open). The caller holds mu.
func (e *engine) unretire(s PathSocket) bool {
	for i, r := range e.retiring {
		if r.s == s {
			e.retiring = append(e.retiring[:i], e.retiring[i+1:]...)
			return true
		}
	}
	return false
}

// retire closes the socket of retirement id, unless it was taken back or
// stop has closed it.
func (e *engine) retire(id uint64) {
	e.mu.Lock()
	for i, r := range e.retiring {
		if r.id == id {
			e.retiring = append(e.retiring[:i], e.retiring[i+1:]...)
			e.mu.Unlock()
			_ = r.s.Close()
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
	// Add fails once closed, or for a socket it has (an undo's, whose
	// slot stays).
	if sp.poller.Add(len(sp.slots), u.s) == nil {
		sp.slots = append(sp.slots, spinSlot{path, udpio.NewTryReader(u.s, len(sp.rd)), u})
	}
}
