//go:build linux

package shm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocoll/gocoll/transport"
	"github.com/gocoll/gocoll/transport/internal/spinwait"
)

// Waits of the progress goroutine.
const (
	// idleWait is the longest sleep on the doorbell; liveness checks and
	// Close never wait longer than this for the goroutine.
	idleWait = LivenessInterval
	// backlogWait is the sleep while slots wait for a full ring: the peer
	// does not ring when it frees space, so the sender looks again soon.
	backlogWait = 50 * time.Microsecond
	// pollBudget is how many slots one ring gives per round, so one busy
	// peer cannot starve the others.
	pollBudget = 64
	// spinGoschedEvery is how many polls a spinning wait makes between
	// yields to the other goroutines of a process that holds no other rank
	// (it yields to other processes after every poll), where some ranks of
	// the world are reached through another transport, whose goroutines
	// (a network's readers, MetaRoCE's engine) may need this P meanwhile.
	spinGoschedEvery = 4
	// spinGoschedEveryAlone is spinGoschedEvery where every rank of the
	// world is another process of this host: nothing of gocoll's but the
	// progress goroutine, which the spin stands in for, waits for the P, and
	// each Gosched ran the scheduler for nothing. A 256 KiB AllToAll, 4
	// ranks on 2 cores (perf record, 10000 calls, load 21, 2 pairs):
	// runtime.goschedImpl 2.55 and 2.25 % of the samples at 4, 0.63 and
	// 0.85 % at 32. The application's own goroutines still run within 32
	// polls of a wait (and at Go's preemption, 10 ms, at most).
	spinGoschedEveryAlone = 32
)

// goschedEveryFor is Endpoint.goschedEvery: 1 where a peer rank lives in
// this process (inProcess), spinGoschedEveryAlone where every rank of the
// world is another process on this host (wholeWorld), else
// spinGoschedEvery.
func goschedEveryFor(inProcess, wholeWorld bool) int {
	switch {
	case inProcess:
		return 1
	case wholeWorld:
		return spinGoschedEveryAlone
	}
	return spinGoschedEvery
}

// run is the progress goroutine: it drains the inbound rings, and sleeps on
// the doorbell when they are empty.
func (e *Endpoint) run() {
	defer close(e.stopped)
	nextCheck := time.Now().Add(LivenessInterval)
	for {
		select {
		case <-e.stop:
			return
		default:
		}
		e.pollMu.Lock()
		worked := e.poll()
		e.pollMu.Unlock()
		if now := time.Now(); now.After(nextCheck) {
			e.checkPeers()
			nextCheck = now.Add(LivenessInterval)
		}
		if worked {
			continue
		}
		// Say we sleep, then look once more: a peer that wrote before it
		// saw the flag is found here, one that wrote after rings.
		e.seg.sleeping().Store(1)
		if e.anyInbound() {
			e.seg.sleeping().Store(0)
			continue
		}
		wait := idleWait
		if e.backlogged.Load() > 0 {
			wait = backlogWait
		}
		e.bell.wait(wait)
		e.seg.sleeping().Store(0)
	}
}

// spin polls the rings until done reports true, ctx ends or budget has
// passed, yielding the processor between polls. While it spins, peers do
// not ring the doorbell; before it stops it looks once more, and wakes the
// progress goroutine for anything that came meanwhile.
func (e *Endpoint) spin(ctx context.Context, done func() bool, budget time.Duration) {
	e.mapMu.RLock()
	defer e.mapMu.RUnlock()
	if e.unmapped {
		return
	}
	sp := e.seg.spinners()
	sp.Add(1)
	spinwait.UntilFuncEvery(ctx, done, budget, e.goschedEvery, func() {
		if e.pollMu.TryLock() {
			e.poll()
			if e.balance != nil {
				e.balance.poll()
			}
			e.pollMu.Unlock()
		}
		if also := e.spinAlso.Load(); also != nil {
			(*also)()
		}
	})
	sp.Add(-1)
	e.leaveSpin()
}

// leaveSpin hands what came while this rank spun, and its own poll did not
// take, to the progress goroutine: peers did not ring for it. It first
// polls once more itself (unless another goroutine polls now), since what
// is left is mostly a count of copied sends (a peer copied one of this
// rank's blocks after the spin's last poll), which a poll takes for a few
// loads, where a ring costs a system call and a wake-up of the progress
// goroutine, on every wait of an AllToAll (256 KiB, 4 ranks: 1.5 rings a
// call, bench/results/shm28). It rings only for what is left after that,
// and only where the progress goroutine has said it sleeps (wakeSelf):
// one that has not will look at the rings before it sleeps.
func (e *Endpoint) leaveSpin() {
	if !e.anyInbound() {
		return
	}
	if e.pollMu.TryLock() {
		e.poll()
		e.pollMu.Unlock()
		if !e.anyInbound() {
			return
		}
	}
	e.wakeSelf()
}

// SpinStep implements transport.JointSpinner: it polls the rings once,
// as a round of spin does, unless another goroutine polls them now. Unlike
// spin it does not tell the peers that this rank spins: they ring the
// doorbell as for a sleeping rank, and whatever SpinStep does not take
// the progress goroutine does.
func (e *Endpoint) SpinStep() {
	e.mapMu.RLock()
	defer e.mapMu.RUnlock()
	if e.unmapped || !e.pollMu.TryLock() {
		return
	}
	e.poll()
	e.pollMu.Unlock()
}

// SetSpinAlso implements transport.JointSpinner: every round of a
// spinning wait (Spin, SpinAny, a board's spin is not one) calls also
// after its own poll.
func (e *Endpoint) SetSpinAlso(also func()) {
	if also == nil {
		e.spinAlso.Store(nil)
		return
	}
	e.spinAlso.Store(&also)
}

// wakeSelf wakes this endpoint's own progress goroutine if it sleeps.
func (e *Endpoint) wakeSelf() {
	if e.seg.sleeping().CompareAndSwap(1, 0) {
		ringDoorbell(e.bell.fd)
	}
}

// anyInbound reports whether any inbound ring holds a slot, or a receiver
// copied a send of this rank since the last poll.
func (e *Endpoint) anyInbound() bool {
	if e.seg.copiedCount().Load() != e.copiedSeen.Load() {
		return true
	}
	if e.stalled.Load() {
		return false // rings hold slots, but none can be taken until a Recv
	}
	for src, p := range e.peers {
		if p != nil && !p.gone.Load() && e.seg.ring(src).pending() {
			return true
		}
	}
	return false
}

// poll handles what the rings hold and moves backlogged slots; it reports
// whether it did anything.
func (e *Endpoint) poll() (worked bool) {
	worked = e.reapCopied()
	for src, p := range e.peers {
		if p == nil || p.gone.Load() {
			continue
		}
		r := e.seg.ring(src)
		for range pollBudget {
			b, ok, err := r.peek()
			if err != nil {
				e.peerDown(src, &transport.PeerError{Rank: src, Err: err})
				break
			}
			if !ok {
				break
			}
			s, err := decodeSlot(b)
			if err == nil {
				err = e.checkSendID(src, s)
			}
			n := s.slots()
			if err == nil && n > 1 {
				s.inline, err = r.gather(s, e.gathered[:])
			}
			if err != nil {
				e.peerDown(src, &transport.PeerError{Rank: src, Err: err})
				break
			}
			if !e.handle(src, s) {
				break
			}
			r.advance(n)
			worked = true
		}
	}
	if e.backlogged.Load() > 0 {
		for _, p := range e.peers {
			if p != nil && p.flush() {
				worked = true
			}
		}
	}
	return worked
}

// checkSendID checks that a rendezvous slot names a word of its sender's
// table.
func (e *Endpoint) checkSendID(src int, s slot) error {
	if idx, _ := sendWordOf(s.sendID); s.kind == kindRendezvous && idx >= e.peers[src].seg.sendWords {
		return fmt.Errorf("%w: send word %d of %d", errBadSlot, idx, e.peers[src].seg.sendWords)
	}
	return nil
}

// handle acts on one slot from rank src; false means it cannot be taken
// now (too many unexpected messages) and stays in the ring.
func (e *Endpoint) handle(src int, s slot) bool {
	switch s.kind {
	case kindInline:
		return e.arrive(src, s)
	case kindRendezvous:
		if len(s.inline) > 0 { // a head (SendWithHead): its message comes first
			head := slot{kind: kindInline, tag: transport.Tag{OpKey: s.tag.OpKey, Seq: s.headSeq},
				length: uint64(len(s.inline)), inline: s.inline}
			ok, tookTail := e.arriveWith(src, head, &s)
			if !ok {
				return false // nothing taken: the slot is read again
			}
			if tookTail {
				return true
			}
			s.inline = nil
		}
		return e.arrive(src, s) // always takes a rendezvous
	case kindAbort:
		err := &transport.RemoteAbortError{Rank: src, Op: s.tag.OpKey, Reason: string(s.inline)}
		e.end(s.tag.OpKey, err)
		e.onAbort.Call(err)
	case kindHello:
		e.checkHello(src, s.inline)
		e.greeted(src)
	case kindBye:
		e.peerDown(src, &transport.PeerError{Rank: src, Err: transport.ErrClosed})
	}
	return true
}

// arrive matches a message from src with a posted receive, or holds it.
func (e *Endpoint) arrive(src int, s slot) bool {
	ok, _ := e.arriveWith(src, s, nil)
	return ok
}

// arriveWith is arrive for s, the head that came in the slot of the
// rendezvous with: when s matches a RecvHead that takes with as its tail
// (tailFits), it copies both and reports tookTail.
func (e *Endpoint) arriveWith(src int, s slot, with *slot) (ok, tookTail bool) {
	k := keyOf(src, s.tag)
	e.mu.Lock()
	if e.closed || e.down[src] != nil || e.aborted[s.tag.OpKey] != nil {
		e.drop(src, s)
		e.mu.Unlock()
		return true, false
	}
	if q := e.recvs[k]; len(q) > 0 {
		r := q[0]
		if s.kind == kindInline {
			popFront(e.recvs, k, q, &e.recvsFree)
			if with != nil && len(s.inline) <= len(r.buf) && e.tailFits(r, *with) && len(e.unexpected[r.tailKey]) == 0 && e.claim(src, *with) {
				n := copy(r.buf, s.inline)
				r.state.Store(stateCopying)
				e.copying.Add(1)
				e.mu.Unlock()
				e.copyTail(src, *with, r, n)
				return true, true
			}
			e.mu.Unlock()
			deliverInline(r, s.inline)
			return true, false
		}
		if !e.claim(src, s) {
			e.mu.Unlock() // withdrawn by its sender: as if never sent
			return true, false
		}
		popFront(e.recvs, k, q, &e.recvsFree)
		r.state.Store(stateCopying)
		e.copying.Add(1)
		e.mu.Unlock()
		e.copyRendezvous(src, s, r)
		return true, false
	}
	a := arrival{s: s, rdv: s.kind == kindRendezvous}
	if !a.rdv {
		if e.held >= e.cfg.MaxUnexpected || e.heldBytes+len(s.inline) > e.cfg.MaxUnexpectedBytes {
			e.stalled.Store(true)
			e.mu.Unlock()
			return false, false
		}
		e.held++
		e.heldBytes += len(s.inline)
		a.inline = e.holdCopy(s.inline)
		a.s.inline = nil
	}
	pushBack(e.unexpected, k, a, &e.unexFree)
	e.mu.Unlock()
	return true, false
}

// drop discards a message nobody will receive. A rendezvous sender is told
// its message was taken, as a network peer that dropped it would. The
// caller holds e.mu.
func (e *Endpoint) drop(src int, s slot) {
	if s.kind == kindRendezvous && e.claim(src, s) {
		_ = e.peers[src].copied(s.sendID)
	}
}

// reapCopied completes the rendezvous sends whose receivers moved their
// words to copied (peer.copied), if the segment's count of them grew since
// the last look; it reports whether it looked. It looks at every send in
// flight: stopping after as many as the count grew by could leave one
// whose count came first behind another copied but not yet counted (its
// receiver descheduled, or dead, between the two writes) until a later
// count. The caller holds e.pollMu.
func (e *Endpoint) reapCopied() bool {
	c := e.seg.copiedCount().Load()
	if c == e.copiedSeen.Load() {
		return false
	}
	e.copiedSeen.Store(c)
	acquired()
	e.mu.Lock()
	e.sends.each(func(r *request) { e.completeCopied(r, nil) })
	e.mu.Unlock()
	return true
}

// completeCopied completes the rendezvous send r if its receiver copied
// it: with r.endErr, else nil. If it did not, a non-nil err completes r
// (its receiver will copy nothing more); nil leaves it. The caller holds
// e.mu, and r is in e.sends (which completeCopied may drop it from).
func (e *Endpoint) completeCopied(r *request, err error) {
	if e.seg.sendWord(r.index).Load() == sendWordValue(r.gen, sendCopied) {
		e.releaseSend(r)
		r.complete(len(r.buf), r.endErr)
		return
	}
	if err != nil {
		e.releaseSend(r)
		r.complete(0, err)
	}
}

// checkPeers fails every peer whose process has ended.
func (e *Endpoint) checkPeers() {
	for _, p := range e.peers {
		if p != nil && p.pidfd >= 0 && exited(p.pidfd) {
			e.peerDown(p.rank, &transport.PeerError{Rank: p.rank, Err: errExited})
		}
	}
}

var errExited = errors.New("shm: the rank's process exited")
