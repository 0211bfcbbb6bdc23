package mrtransport

import (
	"net/netip"
	"sync"

	"github.com/gocoll/gocoll/transport/metaroce/udpio"
)

// udpioSocket is a PathSocket over udpio: recvmmsg and sendmmsg through
// the runtime poller, ECN marks (datagrams leave ECT(0), and arriving CE
// marks reach the core), GRO trains on read and GSO trains on write.
type udpioSocket struct {
	s   *udpio.Socket
	rd  []udpio.Message // read scratch, used by the one reader
	wr  []udpio.Message // write scratch, used by the one writer
	gso []udpio.Message // trains (see trains)
	// gat backs the Gather slices of wr, two per message; slices backs the
	// trains' Gather.
	gat, slices [][]byte
	// parts backs the Gather of a scatter read (placer).
	parts [2][]byte
	// peeking is the placer's peekLock.
	peeking sync.Mutex
}

// gatherMin implements gatherer: payloads too large for a GSO train of
// four are gathered, smaller ones copied into the datagram buffer (the
// engine gathers full pieces below it too, see fullPayloadMin). Both join
// GSO trains, gathered ones without a copy (trains).
func (u *udpioSocket) gatherMin() int { return gsoMax }

// gsoMax is the largest datagram that udpioSocket packs into GSO trains:
// at least four fit in one.
const gsoMax = udpio.MaxPayload / 4

// OpenUDPIO opens a path socket with udpio, bound to addr, with cfg.
func OpenUDPIO(addr netip.AddrPort, cfg udpio.Config) (PathSocket, error) {
	s, err := udpio.Listen(addr, cfg)
	if err != nil {
		return nil, err
	}
	return &udpioSocket{s: s}, nil
}

func (u *udpioSocket) LocalAddr() netip.AddrPort { return u.s.LocalAddr() }

func (u *udpioSocket) Close() error { return u.s.Close() }

func (u *udpioSocket) ReadBatch(ms []Message) (int, error) {
	if len(u.rd) < len(ms) {
		u.rd = make([]udpio.Message, len(ms))
	}
	return readMessages(ms, u.rd, u.s.ReadBatch)
}

// eachReader is a PathSocket that runs a reader's loop itself: it reads
// batches into ms and calls handle(n) after each (ms[:n] filled) until
// handle returns false (nil) or a read fails (the error, as ReadBatch's).
// It saves the read that a ReadBatch loop makes, finding nothing, before
// each wait (udpio.Socket.ReadEach). handle must not close the socket.
type eachReader interface {
	readEach(ms []Message, handle func(n int) bool) error
}

func (u *udpioSocket) readEach(ms []Message, handle func(n int) bool) error {
	if len(u.rd) < len(ms) {
		u.rd = make([]udpio.Message, len(ms))
	}
	rd := u.rd[:len(ms)]
	for i := range ms {
		rd[i] = udpio.Message{Buf: ms[i].Buf}
	}
	defer clear(rd)
	return u.s.ReadEach(rd, func(n int) bool {
		for i := range n {
			ms[i].N, ms[i].Addr, ms[i].CE, ms[i].Segment, ms[i].Received = rd[i].N, rd[i].Addr, rd[i].CE, rd[i].Segment, rd[i].Received
		}
		return handle(n)
	})
}

// readMessages reads datagrams into ms's buffers with read, through rd
// (scratch of at least len(ms) udpio messages).
func readMessages(ms []Message, rd []udpio.Message, read func([]udpio.Message) (int, error)) (int, error) {
	rd = rd[:len(ms)]
	for i := range ms {
		rd[i].Buf = ms[i].Buf
	}
	n, err := read(rd)
	for i := range n {
		ms[i].N, ms[i].Addr, ms[i].CE, ms[i].Segment, ms[i].Received = rd[i].N, rd[i].Addr, rd[i].CE, rd[i].Segment, rd[i].Received
	}
	clear(rd)
	return n, err
}

func (u *udpioSocket) WriteBatch(ms []Message) (int, error) {
	if len(u.wr) < len(ms) {
		u.wr = make([]udpio.Message, len(ms))
	}
	if len(u.gat) < 2*len(ms) {
		u.gat = make([][]byte, 2*len(ms))
	}
	wr := u.wr[:len(ms)]
	for i, m := range ms {
		wr[i] = udpio.Message{Buf: m.Buf[:m.N], Addr: m.Addr, Class: m.Class}
		if m.gather[0] != nil {
			g := u.gat[2*i : 2*i+2]
			g[0], g[1] = m.gather[0], m.gather[1]
			wr[i].Gather = g
		}
	}
	defer clear(u.gat[:2*len(ms)])
	defer clear(wr)
	if len(ms) < 2 || !u.s.Caps().GSO {
		return u.s.WriteBatch(wr)
	}
	trains := u.trains(wr)
	defer clear(u.gso)
	defer clear(u.slices)
	n, err := u.s.WriteBatch(trains)
	// Count the datagrams the trains that went stand for.
	sent := 0
	for _, t := range trains[:n] {
		sent += t.Segments()
	}
	return sent, err
}

// trains packs wr into GSO trains with no copy: a run of consecutive
// datagrams to the same address and of the same class, all of the first
// one's length except the last, which may be shorter and then ends the
// run, becomes one message whose Buf is the first datagram's and whose
// Gather is every other slice of the run in turn (udpio cuts a train every
// Segment bytes wherever its slices end). A run holds at most
// udpio.MaxPayload bytes, udpio.MaxSegments datagrams and
// 1+udpio.MaxTrainGather slices; a datagram over gsoMax goes alone. (Before,
// the gathered datagrams of a train were first copied into an arena back to
// back, and the small ones with them: a copy of every byte of a full piece
// sent in a train.)
func (u *udpioSocket) trains(wr []udpio.Message) []udpio.Message {
	out, sl := u.gso[:0], u.slices[:0]
	for i := 0; i < len(wr); {
		m := wr[i]
		seg := m.Size()
		j, bytes, slices := i+1, seg, 1+len(m.Gather)
		for seg > 0 && seg <= gsoMax && j < len(wr) && j-i < udpio.MaxSegments {
			d := &wr[j]
			n := d.Size()
			if d.Addr != m.Addr || d.Class != m.Class || n == 0 || n > seg ||
				bytes+n > udpio.MaxPayload || slices+1+len(d.Gather) > 1+udpio.MaxTrainGather {
				break
			}
			j, bytes, slices = j+1, bytes+n, slices+1+len(d.Gather)
			if n < seg {
				break
			}
		}
		if j == i+1 {
			out = append(out, m)
			i = j
			continue
		}
		start := len(sl)
		sl = append(sl, m.Gather...)
		for _, d := range wr[i+1 : j] {
			sl = append(sl, d.Buf)
			sl = append(sl, d.Gather...)
		}
		out = append(out, udpio.Message{Buf: m.Buf, Gather: sl[start:len(sl):len(sl)], Addr: m.Addr, Class: m.Class, Segment: seg})
		i = j
	}
	u.gso, u.slices = out, sl
	return out
}
