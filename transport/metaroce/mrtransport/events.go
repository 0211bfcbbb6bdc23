package mrtransport

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/metaroce"
)

// handle acts on one core event. The caller holds eng.mu.
func (e *Endpoint) handle(now time.Duration, ev metaroce.Event) {
	switch ev.Kind {
	case metaroce.EventConnected, metaroce.EventAccepted:
		e.connUp(now, ev)
	case metaroce.EventSendDone:
		e.sendDone(now, ev)
	case metaroce.EventRecvDone:
		e.recvDone(now, ev)
	case metaroce.EventClosed:
		e.connDown(now, ev)
	case metaroce.EventUnexpected:
		if p := e.byConn[ev.Conn]; p != nil {
			e.unexpectedArrived(now, p, msgKey{ev.Stream, ev.Msg})
		}
	case metaroce.EventPathState:
		e.log.Info("mrtransport: path state", "peer", ev.Peer, "conn", uint64(ev.Conn), "path", ev.Path, "state", ev.State.String())
	}
}

// connUp records a connection this rank dialed (EventConnected) or
// accepted (EventAccepted). Lower ranks dial higher ones, so a connection
// is accepted only from a lower rank that has none yet; any other is
// closed.
func (e *Endpoint) connUp(now time.Duration, ev metaroce.Event) {
	var p *peer
	if ev.Peer < uint64(len(e.peers)) {
		p = e.peers[ev.Peer]
	}
	switch {
	case p == nil:
		e.log.Warn("mrtransport: connection from an unknown node", "node", ev.Peer)
		_ = e.eng.core.Close(now, ev.Conn)
		return
	case ev.Kind == metaroce.EventConnected && p.conn != ev.Conn:
		e.counters.strayEvents++
		return
	case ev.Kind == metaroce.EventAccepted && (p.rank > e.cfg.Rank || p.conn != 0 || e.closed || p.excluded):
		e.log.Warn("mrtransport: refused a connection", "peer", p.rank, "have", uint64(p.conn))
		_ = e.eng.core.Close(now, ev.Conn)
		return
	}
	p.conn, p.up, p.err = ev.Conn, true, nil
	e.byConn[ev.Conn] = p
	e.log.Debug("mrtransport: connected", "peer", p.rank, "conn", uint64(ev.Conn), "kind", ev.Kind.String())
	e.postCtrlRecv(now, p)
	e.nUp++
	e.checkConnected()
}

// connDown handles a connection that is gone. Every request of the
// connection the core held has already failed with its own event. Sends
// queued now or later fail with a *transport.PeerError (or
// transport.ErrClosed after this side's Close). Receives still take the
// whole messages that had arrived before the end, which the core keeps
// (a peer that sent its last results and exited is the common case);
// those with no such message fail as sends do. While Connect still waits,
// a dialed connection is dialed again (what the core kept of the old one
// is dropped) and an accepted one may be accepted again.
func (e *Endpoint) connDown(now time.Duration, ev metaroce.Event) {
	p := e.byConn[ev.Conn]
	if p == nil || p.conn != ev.Conn {
		return
	}
	wasUp := p.up
	p.up = false
	if p.err == nil {
		p.err = e.peerError(p, ev.Err)
	}
	clear(p.ctrlSends)
	clear(p.unexpected)
	retry := !e.closed && !e.isConnected() && !p.excluded && !errors.Is(ev.Err, metaroce.ErrAuth)
	if e.closed || retry {
		delete(e.byConn, ev.Conn)
		e.failQueued(now, p, p.err)
	} else {
		e.resubmitQueued(now, p) // byConn stays: the core's kept messages complete receives with events
	}
	level := slog.LevelWarn // a failure
	switch {
	case e.closed:
		level = slog.LevelDebug // this endpoint's own Close
	case errors.Is(ev.Err, metaroce.ErrPeerClosed):
		level = slog.LevelDebug // the peer left: a normal close, silent at info
	}
	if errors.Is(ev.Err, metaroce.ErrPeerTimeout) {
		// What the silence was judged on: the time this endpoint was
		// itself late (not counted) and the reads before the judgement.
		cs := e.eng.core.Stats()
		e.log.Log(context.Background(), level, "mrtransport: connection closed", "peer", p.rank, "conn", uint64(ev.Conn), "err", ev.Err,
			"late", cs.Late, "lateRuns", cs.LateRuns, "silenceDrains", e.eng.st.silenceDrains.Load(),
			"lateDrains", e.eng.st.lateDrains.Load(), "drainedBatches", e.eng.st.drainedBatches.Load())
	} else {
		e.log.Log(context.Background(), level, "mrtransport: connection closed", "peer", p.rank, "conn", uint64(ev.Conn), "err", ev.Err)
	}
	if wasUp {
		e.nUp--
	}
	if e.closed || e.isConnected() || p.excluded {
		return
	}
	if errors.Is(ev.Err, metaroce.ErrAuth) {
		if e.authErr == nil {
			e.authErr = p.err
			close(e.refused)
		}
		return // another try has the same key
	}
	// Still setting up: try again.
	_ = e.eng.core.Close(now, ev.Conn) // forgets what the core kept of it
	p.conn, p.err, p.ctrlOut, p.ctrlIn = 0, nil, 0, 0
	if p.rank > e.cfg.Rank {
		e.dial(now, p)
	}
}

// resubmitQueued hands every queue's head that is not in the core to the
// core again after p's connection ended: a receive takes a whole message
// the core kept, or fails, and the next request with its key follows
// (finish submits it). The caller holds eng.mu.
func (e *Endpoint) resubmitQueued(now time.Duration, p *peer) {
	e.nBlocked -= len(p.blocked)
	p.blocked = nil
	var heads []*request
	for _, qs := range []map[msgKey]*queue{p.sends, p.recvs} {
		for _, q := range qs {
			if r := q.head(); r != nil && r.state == stateQueued {
				heads = append(heads, r)
			}
		}
	}
	slices.SortFunc(heads, func(a, b *request) int {
		return cmp.Or(cmp.Compare(a.key.stream, b.key.stream), cmp.Compare(a.key.msg, b.key.msg))
	})
	for _, r := range heads {
		e.submit(now, p, r)
	}
}

func (e *Endpoint) isConnected() bool {
	select {
	case <-e.connected:
		return true
	default:
		return false
	}
}

// dial opens the connection to a higher rank. The caller holds eng.mu.
func (e *Endpoint) dial(now time.Duration, p *peer) {
	var id metaroce.ConnID
	var err error
	if p.maxDatagram > 0 {
		id, err = e.eng.core.ConnectDatagram(now, uint64(p.rank), p.maxDatagram)
	} else {
		id, err = e.eng.core.Connect(now, uint64(p.rank))
	}
	if err != nil {
		p.err = fmt.Errorf("mrtransport: dial rank %d: %w", p.rank, err)
		return
	}
	p.conn = id
	e.byConn[id] = p
}

// peerError maps a core error that ended an operation with p to the
// transport's error. Once this endpoint is closed (a send that Close let
// drain, failed by the connection's end), every such error is
// transport.ErrClosed, naming its cause.
func (e *Endpoint) peerError(p *peer, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, metaroce.ErrClosed):
		return transport.ErrClosed
	case e.closed, errors.Is(err, metaroce.ErrPeerClosed):
		return &transport.PeerError{Rank: p.rank, Err: fmt.Errorf("%w (%w)", transport.ErrClosed, err)}
	case errors.Is(err, metaroce.ErrIdleTimeout), errors.Is(err, metaroce.ErrPeerGone):
		return &transport.PeerError{Rank: p.rank, Err: err}
	}
	return fmt.Errorf("mrtransport: rank %d: %w", p.rank, err)
}

// sendDone completes the send at the head of the event's key.
func (e *Endpoint) sendDone(now time.Duration, ev metaroce.Event) {
	p := e.byConn[ev.Conn]
	if p == nil {
		e.counters.strayEvents++
		return
	}
	k := msgKey{ev.Stream, ev.Msg}
	if k.isCtrl() {
		delete(p.ctrlSends, k)
		return
	}
	r := p.inCore(true, k)
	if r == nil {
		e.counters.strayEvents++
		return
	}
	if ev.Err != nil {
		e.finish(now, p, r, 0, e.peerError(p, ev.Err))
		return
	}
	e.finish(now, p, r, ev.N, nil)
}

// inCore returns the request the core holds for key k, or nil.
func (p *peer) inCore(isSend bool, k msgKey) *request {
	q := p.queues(isSend)[k]
	if q == nil {
		return nil
	}
	if r := q.head(); r != nil && r.state == stateInCore {
		return r
	}
	return nil
}

// recvDone completes the receive at the head of the event's key. A
// message its sender cancelled (a withdrawn send) does not end the
// receive: it is posted again for the next message with its tag, as if
// the cancelled message had never been sent.
func (e *Endpoint) recvDone(now time.Duration, ev metaroce.Event) {
	p := e.byConn[ev.Conn]
	if p == nil {
		e.counters.strayEvents++
		return
	}
	k := msgKey{ev.Stream, ev.Msg}
	if k.isCtrl() {
		e.ctrlDone(now, p, ev)
		return
	}
	r := p.inCore(false, k)
	if r == nil {
		e.counters.strayEvents++
		return
	}
	switch {
	case ev.Err == nil:
		e.finish(now, p, r, ev.N, nil)
	case errors.Is(ev.Err, metaroce.ErrRemoteCancelled) && !r.sink:
		e.submit(now, p, r)
	case errors.Is(ev.Err, metaroce.ErrTruncated):
		err := error(nil)
		if !r.sink {
			err = fmt.Errorf("mrtransport: message from rank %d (%v) longer than the %d-byte buffer: %w",
				p.rank, r.tag, len(r.buf), transport.ErrTruncated)
		}
		e.finish(now, p, r, 0, err)
	default:
		e.finish(now, p, r, 0, e.peerError(p, ev.Err))
	}
}
