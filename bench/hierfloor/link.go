package main

import (
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gocoll/gocoll/collective/reduce"
	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

// inbox takes a rank's arriving datagrams: it sums or copies each payload
// into buf at its offset, credits the bytes to its call, phase and piece,
// and closes that piece's done channel when all of it has come. (Pieces
// of different phases land on the same bytes: the floor moves and
// reduces bytes, its values mean nothing.)
type inbox struct {
	phases []Phase
	pieces int
	buf    []byte // where every network phase's bytes land (from offset 0)
	sum    reduce.Kernel
	got    []atomic.Int64 // by index
	done   []chan struct{}
	bad    atomic.Int64 // datagrams not ours, out of range or truncated
	// refused counts the port unreachables (a peer not yet listening, or
	// gone) reported to reads and writes; the datagram refused is lost.
	refused atomic.Int64
}

func newInbox(phases []Phase, calls, pieces int, buf []byte, sum reduce.Kernel) *inbox {
	n := calls * len(phases) * pieces
	in := &inbox{phases: phases, pieces: pieces, buf: buf, sum: sum, got: make([]atomic.Int64, n), done: make([]chan struct{}, n)}
	for i := range in.done {
		in.done[i] = make(chan struct{})
		if ph := phases[i/pieces%len(phases)]; ph.Kind != KindMem {
			if _, l := Span(ph.Bytes, pieces, payloadLen, i%pieces); l == 0 {
				close(in.done[i])
			}
		}
	}
	return in
}

// index is where call c's phase ph's piece p is counted.
func (in *inbox) index(c, ph, p int) int { return (c*len(in.phases)+ph)*in.pieces + p }

// take handles one datagram.
func (in *inbox) take(d []byte) {
	h, p, err := ParseHeader(d)
	if err != nil || int(h.Phase) >= len(in.phases) || uint64(h.Call) >= uint64(len(in.got)) {
		in.bad.Add(1)
		return
	}
	ph := in.phases[h.Phase]
	if ph.Kind == KindMem || h.Offset > uint64(ph.Bytes) || uint64(len(p)) > uint64(ph.Bytes)-h.Offset || len(p)%4 != 0 {
		in.bad.Add(1)
		return
	}
	pc := h.Offset / uint64(PieceLen(ph.Bytes, in.pieces, payloadLen))
	i := in.index(int(h.Call), int(h.Phase), int(pc))
	if len(p) == 0 || pc >= uint64(in.pieces) || i >= len(in.got) {
		in.bad.Add(1)
		return
	}
	_, want := Span(ph.Bytes, in.pieces, payloadLen, int(pc))
	dst := in.buf[h.Offset : h.Offset+uint64(len(p))]
	if ph.Sum {
		in.sum(dst, dst, p)
	} else {
		copy(dst, p)
	}
	n := int64(len(p))
	if v := in.got[i].Add(n); v >= int64(want) && v-n < int64(want) {
		close(in.done[i])
	}
}

// read takes s's datagrams until s is closed.
func (in *inbox) read(s *udpio.Socket) {
	ms := make([]udpio.Message, 16)
	for i := range ms {
		ms[i].Buf = make([]byte, udpio.ReadBufferSize)
	}
	for {
		k, err := s.ReadBatch(ms)
		if errors.Is(err, syscall.ECONNREFUSED) { // a port unreachable for one of our sends: not this read's
			_, _, _ = s.DrainErrors(nil)
			in.refused.Add(1)
			continue
		}
		if err != nil {
			return
		}
		in.takeAll(ms[:k])
	}
}

// takeAll takes every datagram of ms.
func (in *inbox) takeAll(ms []udpio.Message) {
	for _, m := range ms {
		if m.Truncated {
			in.bad.Add(1)
			continue
		}
		udpio.SplitSegments(m, in.take)
	}
}

// wait blocks until piece p of phase ph of call has come in full, or quit
// is closed (errQuit), or returns an error naming the bytes missing after
// timeout.
func (in *inbox) wait(call, ph, p int, timeout time.Duration, quit <-chan struct{}) error {
	i := in.index(call, ph, p)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-in.done[i]:
		return nil
	case <-quit:
		return errQuit
	case <-t.C:
		_, want := Span(in.phases[ph].Bytes, in.pieces, payloadLen, p)
		return fmt.Errorf("call %d phase %s piece %d: %d of %d bytes after %v (lost)", call, in.phases[ph].Name, p, in.got[i].Load(), want, timeout)
	}
}

// outlet sends a phase's bytes to a peer over its sockets, round robin,
// datagram by datagram or in GSO trains, paced or not.
type outlet struct {
	socks   []*udpio.Socket
	dsts    []netip.AddrPort // one a socket
	payload int              // bytes a datagram after the header
	train   int              // datagrams a train; 1: no trains
	rate    float64          // bytes/s over all sockets; 0: as fast as the sockets take them
	burst   int              // bytes sendable at once when paced
	tat     time.Time        // paced: when the bytes sent so far are due
	next    int              // units sent so far: the next goes to socket next%len(socks)
	refused *atomic.Int64    // port unreachables met (the inbox's count)
	hdrs    []byte
	batches [][]udpio.Message // one a socket
	gather  [][]byte
}

// unitMax is the most units (datagrams or trains) one socket's batch holds.
const unitMax = 64

func newOutlet(socks []*udpio.Socket, dsts []netip.AddrPort, payload, train int, rate float64, burst int, refused *atomic.Int64) *outlet {
	o := &outlet{socks: socks, dsts: dsts, payload: payload, train: train, rate: rate, burst: burst, refused: refused,
		hdrs: make([]byte, len(socks)*unitMax*train*HeaderLen), batches: make([][]udpio.Message, len(socks)),
		gather: make([][]byte, 0, len(socks)*unitMax*2*train)}
	return o
}

// send moves data, the bytes at off of the phase's, tagged call and
// phase, and returns when the sockets have taken all of it. Paced, a unit
// (datagram or train) goes when the outlet's schedule (tat: when its
// bytes so far are due at rate, carried over from send to send) is at
// most burst bytes ahead of now.
func (o *outlet) send(call, phase, off int, data []byte) error {
	unit := o.payload * o.train
	ahead := time.Duration(float64(o.burst) / max(o.rate, 1) * 1e9)
	sent, hi := 0, 0
	for sent < len(data) {
		now := time.Now()
		if o.rate > 0 {
			if o.tat.Before(now) {
				o.tat = now
			}
			if wait := o.tat.Sub(now) - ahead; wait > 0 {
				pause(min(wait, time.Millisecond))
				continue
			}
		}
		hi, o.gather = 0, o.gather[:0]
		for sent < len(data) && hi < len(o.socks)*unitMax*o.train {
			if o.rate > 0 && o.tat.Sub(now) > ahead {
				break
			}
			j := o.next % len(o.socks)
			if len(o.batches[j]) == unitMax {
				break
			}
			n := min(unit, len(data)-sent)
			o.batches[j] = append(o.batches[j], o.message(call, phase, j, &hi, off+sent, data[sent:sent+n]))
			sent += n
			o.next++
			if o.rate > 0 {
				o.tat = o.tat.Add(time.Duration(float64(n) / o.rate * 1e9))
			}
		}
		if err := o.flush(); err != nil {
			return err
		}
	}
	return nil
}

// message builds one datagram or train of chunk, at offset off of the
// phase's bytes, for socket j.
func (o *outlet) message(call, phase, j int, hi *int, off int, chunk []byte) udpio.Message {
	m := udpio.Message{Addr: o.dsts[j]}
	g0 := len(o.gather)
	for k := 0; k < len(chunk); k += o.payload {
		h := o.hdrs[*hi*HeaderLen : (*hi+1)*HeaderLen : (*hi+1)*HeaderLen]
		*hi++
		Header{Call: uint32(call), Phase: uint16(phase), Offset: uint64(off + k)}.Put(h)
		o.gather = append(o.gather, h, chunk[k:min(k+o.payload, len(chunk))])
	}
	g := o.gather[g0:len(o.gather):len(o.gather)]
	m.Buf, m.Gather = g[0], g[1:]
	if len(chunk) > o.payload {
		m.Segment = HeaderLen + o.payload
	}
	return m
}

// flush writes every socket's batch. A port unreachable reported to a
// write (for an earlier datagram: the kernel reports it to the next call)
// is counted in refused and the rest of the batch written again, up to
// maxRefused times a batch.
func (o *outlet) flush() error {
	for j, b := range o.batches {
		for k, tries := 0, 0; k < len(b); {
			n, err := o.socks[j].WriteBatch(b[k:])
			k += n
			if errors.Is(err, syscall.ECONNREFUSED) && tries < maxRefused {
				_, _, _ = o.socks[j].DrainErrors(nil)
				o.refused.Add(1)
				tries++
				continue
			}
			if err != nil {
				return fmt.Errorf("send to %v: %w", o.dsts[j], err)
			}
		}
		o.batches[j] = b[:0]
	}
	return nil
}

// maxRefused is the most port unreachables one batch's writes go past.
const maxRefused = 100
