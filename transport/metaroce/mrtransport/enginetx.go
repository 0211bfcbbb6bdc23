package mrtransport

// The engine's transmit side: the datagrams a lock's holder polls from the
// core, grouped by path socket (txBatch), and their writes, outside mu and
// in each path's order (engine.go's comment says why).

import (
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// txBatch is up to engine.batch datagrams polled from the core, grouped by
// path socket.
type txBatch struct {
	bufs    [][]byte // datagram buffers, allocated as needed
	n       int      // buffers in use
	byPath  [][]Message
	tickets []uint64         // by path with datagrams: its turn to write there
	refused []netip.AddrPort // peer addresses its writes found closed
	// gathered counts its datagrams with a payload in a message
	// (Message.gather); holds are the sends whose end waits for the
	// datagrams of one of its paths to be written; by path, written is
	// set once they are, held while some end waits for them
	// (heldwrite.go).
	gathered      int
	holds         []heldOn
	written, held []atomic.Bool
}

// gatherMinOf returns the smallest payload the sockets all gather, or 0 if
// some socket does not gather.
func gatherMinOf(socks []PathSocket) int {
	g := 0
	for _, s := range socks {
		gs, ok := s.(gatherer)
		if !ok {
			return 0
		}
		g = max(g, gs.gatherMin())
	}
	return g
}

// fullPayloadMin is the payload of a full piece in a datagram of
// maxDatagram bytes, on an authenticated connection (whose trailer takes
// wire.TrailerLen of it) and, with ackRoom (Core.AckRoom), cut
// wire.AckRoomLen short for a piggybacked ACK. The engine gathers payloads
// from this size on even where the sockets would copy them: a DATA of a
// full piece (a bulk transfer's datagrams at MTU 9000, whose payloads are
// below a socket's gatherMin) then goes out straight from the message,
// not copied into the datagram buffer first. A gathered DATA carries a
// piggybacked ACK as a copied one does (after the payload, in the
// datagram's tail: metaroce.Transmit.Payload). (Before session 22 the
// core piggybacked on copied DATA only, and this was the least payload
// that left no room for an ACK of every path.)
func fullPayloadMin(maxDatagram int, ackRoom bool) int {
	n := maxDatagram - wire.DataOverhead - wire.TrailerLen
	if ackRoom && maxDatagram-wire.TrailerLen >= wire.AckRoomMinDatagram {
		n -= wire.AckRoomLen
	}
	return max(n, 1)
}

// poll fills the pending batch with datagrams the core has ready, up to
// the batch size. The caller holds mu.
func (e *engine) poll(now time.Duration) {
	if e.pending == nil {
		e.pending = e.newBatch()
	}
	b := e.pending
	for b.n < e.batch {
		if b.n == len(b.bufs) {
			b.bufs = append(b.bufs, make([]byte, e.maxDatagram))
		}
		buf := b.bufs[b.n]
		tx, ok := e.core.PollTransmitVec(now, buf, e.gatherMin)
		if !ok {
			break
		}
		e.countPolled(buf)
		addr, ok := e.route(tx.Peer, tx.Path)
		if !ok || tx.Path < 0 || tx.Path >= len(e.socks) {
			e.st.noRoute.Add(1)
			continue
		}
		m := Message{Buf: buf, N: tx.N, Addr: addr}
		if tx.Control {
			m.Class = e.controlClass
		}
		if tx.Payload != nil {
			m.gather = [2][]byte{tx.Payload, buf[tx.N : tx.N+tx.Tail]}
			b.gathered++
		}
		b.byPath[tx.Path] = append(b.byPath[tx.Path], m)
		b.n++
	}
	if b.n == 0 {
		e.recycle(b)
		e.pending = nil
	}
}

// countPolled counts datagram b, just polled, by kind: DATA, and of it
// those carrying an ACK, or an ACK alone.
func (e *engine) countPolled(b []byte) {
	switch wire.Type(b[1]) {
	case wire.TypeData:
		e.st.dataPolled.Add(1)
		if b[2]&wire.FlagAck != 0 {
			e.st.acksOnData.Add(1)
		}
	case wire.TypeAck:
		e.st.acksPolled.Add(1)
	default:
		e.st.otherPolled.Add(1)
	}
}

func (e *engine) newBatch() *txBatch {
	if n := len(e.free); n > 0 {
		b := e.free[n-1]
		e.free = e.free[:n-1]
		return b
	}
	return &txBatch{byPath: make([][]Message, len(e.socks)), tickets: make([]uint64, len(e.socks)),
		written: make([]atomic.Bool, len(e.socks)), held: make([]atomic.Bool, len(e.socks))}
}

// recycle keeps b for reuse, its write over or never to happen: the
// sends that waited for it end (letGo). The caller holds mu.
func (e *engine) recycle(b *txBatch) {
	if b == nil {
		return
	}
	e.letGo(b)
	for i := range b.byPath {
		clear(b.byPath[i])
		b.byPath[i] = b.byPath[i][:0]
	}
	b.n = 0
	b.refused = b.refused[:0]
	e.free = append(e.free, b)
}

// write sends batch b, one WriteBatch per path socket, each when b's turn
// on that path comes: a path's datagrams leave in the order they were
// polled (reordering within a path would look like loss to the core),
// while batches written from several goroutines use different paths'
// sockets at once. A datagram a socket refuses is dropped and counted:
// the core resends what is lost. A write that fails with ECONNREFUSED
// (an earlier datagram's port unreachable) is tried again, and the peer
// addresses found closed are gathered in b.refused. The caller does not
// hold mu.
func (e *engine) write(b *txBatch) {
	for path, ms := range b.byPath {
		if len(ms) == 0 {
			continue
		}
		e.txMu.Lock()
		for e.txTurn[path] != b.tickets[path] {
			e.txCond.Wait()
		}
		e.txMu.Unlock()
		failed, retries := false, 0
		s := e.sock(path)
		for len(ms) > 0 {
			n, err := s.WriteBatch(ms)
			e.st.writeBatches.Add(1)
			for _, m := range ms[:n] {
				e.st.bytesWritten.Add(int64(m.N + len(m.gather[0]) + len(m.gather[1])))
			}
			e.st.datagramsWritten.Add(int64(n))
			switch {
			case err == nil:
			case isRefused(err) && retries < refusedRetries:
				failed = true
				retries++ // not this datagram's error: it goes next time
			default:
				failed = true
				e.st.writeErrors.Add(1)
				n++ // skip the datagram the error concerns
			}
			ms = ms[min(n, len(ms)):]
		}
		b.refused = e.drainIfPending(s, failed, b.refused)
		e.txMu.Lock()
		e.txTurn[path]++
		e.txCond.Broadcast()
		e.txMu.Unlock()
		e.wrotePath(b, path)
	}
}
