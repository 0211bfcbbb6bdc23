package simfabric

import (
	"fmt"
	"time"
)

// Send injects a copy of pkt into path p at the current virtual time. The
// caller keeps pkt. It fails with ErrNotFound for an unknown path,
// ErrPacketSize above MaxPacketBytes, and ErrFull when MaxPacketsInFlight
// packets are already inside the fabric; a failed Send counts nowhere.
// Send may be called from AdvanceTo's deliver callback.
func (f *Fabric) Send(p PathID, pkt []byte) error {
	if !f.validPath(p) {
		return fmt.Errorf("%w: path %d", ErrNotFound, p)
	}
	if len(pkt) > f.cfg.MaxPacketBytes {
		return fmt.Errorf("%w: %d > %d bytes", ErrPacketSize, len(pkt), f.cfg.MaxPacketBytes)
	}
	if f.inFlight >= f.cfg.MaxPacketsInFlight {
		return fmt.Errorf("%w: MaxPacketsInFlight=%d", ErrFull, f.cfg.MaxPacketsInFlight)
	}
	f.inFlight++
	f.paths[p].stats.Sent.add(len(pkt))
	f.enterLink(&packet{data: append([]byte{}, pkt...), path: p}, f.now)
	return nil
}

// enterLink offers pkt to the link at pkt.hop of its path at time t, and
// either drops it or schedules its arrival at the link's far end.
func (f *Fabric) enterLink(pkt *packet, t time.Duration) {
	l := f.links[f.paths[pkt.path].links[pkt.hop]]
	size := len(pkt.data)
	l.stats.Sent.add(size)
	if l.cut {
		f.drop(pkt, l, dropCut)
		return
	}
	if !f.enqueue(pkt, l, t) {
		return
	}
	finish := l.serialise(t, size)
	if l.lost(pkt, t) {
		f.drop(pkt, l, dropLoss)
		return
	}
	if size > 0 && l.chance(l.cfg.Corrupt) {
		l.flipBit(pkt.data)
		l.stats.Corrupted.add(size)
		f.paths[pkt.path].stats.Corrupted.add(size)
	}
	pkt.epoch = l.epoch
	f.schedule(pkt, l.arrival(finish))
	if l.chance(l.cfg.Dup) && f.inFlight < f.cfg.MaxPacketsInFlight {
		dup := *pkt
		dup.data = append([]byte{}, pkt.data...)
		f.inFlight++
		l.stats.Duplicated.add(size)
		f.paths[pkt.path].stats.Duplicated.add(size)
		f.schedule(&dup, l.arrival(finish))
	}
}

// enqueue applies l's queue to pkt arriving at t: tail drop if it does not
// fit, ECN marking above the threshold. It reports whether pkt was queued.
// A link without a rate has no queue.
func (f *Fabric) enqueue(pkt *packet, l *link, t time.Duration) bool {
	if l.cfg.Rate == 0 {
		return true
	}
	size := len(pkt.data)
	queued := l.drain(t)
	if queued+size > l.cfg.QueueBytes {
		f.drop(pkt, l, dropQueueFull)
		return false
	}
	l.stats.MaxQueueBytes = max(l.stats.MaxQueueBytes, queued+size)
	if l.cfg.ECNThresholdBytes > 0 && queued > l.cfg.ECNThresholdBytes {
		pkt.ce = true
		l.stats.ECNMarked.add(size)
	}
	return true
}

func (f *Fabric) schedule(pkt *packet, at time.Duration) {
	f.seq++
	f.packets.push(packetEvent{at: at, seq: f.seq, pkt: pkt})
}

// drop counts pkt as dropped on link l and forgets it.
func (f *Fabric) drop(pkt *packet, l *link, r dropReason) {
	l.stats.drop(r, len(pkt.data))
	f.paths[pkt.path].stats.drop(r, len(pkt.data))
	f.inFlight--
}

// leaveLink handles pkt reaching the far end of its current link at f.now:
// it moves on to the next link, or is delivered.
func (f *Fabric) leaveLink(pkt *packet, deliver func(Delivery)) {
	pa := &f.paths[pkt.path]
	l := f.links[pa.links[pkt.hop]]
	if l.cut || l.epoch != pkt.epoch {
		f.drop(pkt, l, dropCut)
		return
	}
	l.stats.Delivered.add(len(pkt.data))
	pkt.hop++
	if pkt.hop < len(pa.links) {
		f.enterLink(pkt, f.now)
		return
	}
	f.inFlight--
	pa.stats.Delivered.add(len(pkt.data))
	if pkt.ce {
		pa.stats.ECNMarked.add(len(pkt.data))
	}
	deliver(Delivery{From: pa.from, To: pa.to, Path: pkt.path, Data: pkt.data, CE: pkt.ce, At: f.now})
}

// NextEventTime returns the time of the earliest pending event (a packet
// reaching the end of a link, or a scheduled fault), and false if there is
// none.
func (f *Fabric) NextEventTime() (time.Duration, bool) {
	switch {
	case f.packets.len() == 0 && f.faults.len() == 0:
		return 0, false
	case f.packets.len() == 0:
		return f.faults.peek().at, true
	case f.faults.len() == 0:
		return f.packets.peek().at, true
	}
	return min(f.packets.peek().at, f.faults.peek().at), true
}

// AdvanceTo moves virtual time forward to t, processing every event due at
// or before t in time order and calling deliver for each packet that reaches
// the end of its path. Events at the same instant are processed faults
// first, then packets, each in the order they were scheduled (for packets:
// the order in which they entered their current link). Packets sent from
// deliver are processed too if they arrive by t.
//
// It fails with ErrPast if t is before Now, ErrReentrant if called from
// deliver, and ErrLivelock if more than MaxEventsPerInstant events happen at
// one instant; after ErrLivelock, Now is that instant and the remaining
// events stay pending. deliver may be nil to drop deliveries.
func (f *Fabric) AdvanceTo(t time.Duration, deliver func(Delivery)) error {
	if f.advancing {
		return ErrReentrant
	}
	if t < f.now {
		return fmt.Errorf("%w: AdvanceTo(%v) at %v", ErrPast, t, f.now)
	}
	if deliver == nil {
		deliver = func(Delivery) {}
	}
	f.advancing = true
	defer func() { f.advancing = false }()
	atInstant := 0
	for {
		next, ok := f.NextEventTime()
		if !ok || next > t {
			break
		}
		if next != f.now {
			f.now, atInstant = next, 0
		}
		if atInstant++; atInstant > f.cfg.MaxEventsPerInstant {
			return fmt.Errorf("%w: more than %d at %v", ErrLivelock, f.cfg.MaxEventsPerInstant, f.now)
		}
		if f.faults.len() > 0 && f.faults.peek().at == next {
			f.apply(f.faults.pop().fault)
			continue
		}
		f.leaveLink(f.packets.pop().pkt, deliver)
	}
	f.now = t
	return nil
}
