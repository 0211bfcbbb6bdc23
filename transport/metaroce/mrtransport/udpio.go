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
	gso []udpio.Message // coalesced trains
	// arena holds the datagrams Coalesce copies into trains; gsoMax is the
	// largest datagram worth coalescing (bigger ones go alone, since a
	// train holds at most udpio.MaxPayload bytes).
	arena []byte
	// gat backs the Gather slices of wr, two per message.
	gat [][]byte
	// parts backs the Gather of a scatter read (placer).
	parts [2][]byte
	// peeking is the placer's peekLock.
	peeking sync.Mutex
}

// gatherMin implements gatherer: payloads too large to coalesce are
// gathered; smaller ones are copied, so that they can join GSO trains
// (the engine gathers full pieces below it too, see fullPayloadMin, and
// WriteBatch copies those that can join a train: flatten).
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
	small := false
	for i, m := range ms {
		wr[i] = udpio.Message{Buf: m.Buf[:m.N], Addr: m.Addr, Class: m.Class}
		if m.gather[0] != nil {
			g := u.gat[2*i : 2*i+2]
			g[0], g[1] = m.gather[0], m.gather[1]
			wr[i].Gather = g
			continue
		}
		small = small || m.N <= gsoMax
	}
	gso := len(ms) > 1 && u.s.Caps().GSO
	used := 0
	if gso {
		used = u.flatten(wr)
		small = small || used > 0
	}
	if !small || !gso {
		n, err := u.s.WriteBatch(wr)
		clear(wr)
		clear(u.gat)
		return n, err
	}
	if u.arena == nil {
		u.arena = make([]byte, 4*udpio.MaxPayload)
	}
	trains, _ := udpio.Coalesce(u.gso[:0], wr, u.arena[used:])
	u.gso = trains
	n, err := u.s.WriteBatch(trains)
	// Count the datagrams the trains that went stand for.
	sent := 0
	for _, t := range trains[:n] {
		sent += t.Segments()
	}
	clear(wr)
	clear(u.gso)
	clear(u.gat)
	return sent, err
}

// flatten copies the gathered datagrams of wr that may join a GSO train
// (at most gsoMax bytes, next to a datagram to the same address and of the
// same class) whole into the arena, back to back, and makes their Buf
// point there without Gather, so that Coalesce packs them into trains
// without copying them again; the rest keep their Gather. A gathered
// datagram alone is sent from where its payload lies, with no copy. It
// returns the arena bytes used, which Coalesce must not reuse.
func (u *udpioSocket) flatten(wr []udpio.Message) int {
	used := 0
	for i := range wr {
		m := &wr[i]
		if len(m.Gather) == 0 {
			continue
		}
		n := len(m.Buf)
		for _, g := range m.Gather {
			n += len(g)
		}
		joins := func(j int) bool {
			return j >= 0 && j < len(wr) && wr[j].Addr == m.Addr && wr[j].Class == m.Class
		}
		if n > gsoMax || !(joins(i-1) || joins(i+1)) {
			continue
		}
		if u.arena == nil {
			u.arena = make([]byte, 4*udpio.MaxPayload)
		}
		if used+n > len(u.arena) {
			break
		}
		b := append(u.arena[used:used], m.Buf...)
		for _, g := range m.Gather {
			b = append(b, g...)
		}
		m.Buf, m.Gather = b, nil
		used += n
	}
	return used
}
