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
func (u *udpioSocket) gatherMin() int { return udpio.MaxTrainDatagram }

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

// trains packs wr into GSO trains with no copy (udpio.GatherTrains), in
// u.gso and u.slices.
func (u *udpioSocket) trains(wr []udpio.Message) []udpio.Message {
	u.gso, u.slices = udpio.GatherTrains(u.gso[:0], wr, u.slices[:0])
	return u.gso
}
