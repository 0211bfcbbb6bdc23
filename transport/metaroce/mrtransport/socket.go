package mrtransport

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// Message is one datagram read from or written to a [PathSocket].
type Message struct {
	// Buf holds the datagram: on a read, the space to read into (its
	// length is the most that is read); on a write, Buf[:N] is sent.
	Buf []byte
	// N is the datagram's length.
	N int
	// Addr is the source of a datagram read, the destination of one
	// written.
	Addr netip.AddrPort
	// CE reports, on a read, that the datagram's IP header carried the
	// ECN Congestion Experienced mark. Sockets that cannot tell leave it
	// false.
	CE bool
	// Segment is, on a read, the size of each datagram of a train the
	// kernel merged (GRO): Buf[:N] then holds datagrams of Segment bytes
	// back to back, the last one possibly shorter. 0 means one datagram.
	Segment int
	// Received is, on a read, when the kernel received the datagram (for
	// a GRO train, its first), in nanoseconds since the Unix epoch on the
	// wall clock (udpio.Message.Received); 0 if the socket cannot tell.
	// The engine hands the core the arrival (arrival.go), so that the
	// time the datagram waited for a busy reader does not count as the
	// network's.
	Received int64
	// Class is, on a write, the DSCP (0 to 63) to send the datagram with:
	// Config.ControlDSCP on control datagrams, 0 on DATA. Sockets that
	// cannot mark a datagram send it unmarked.
	Class uint8
	// gather, on a write to a socket that gathers (see gatherer), is the
	// rest of the datagram after Buf[:N], sent from where it lies.
	gather [2][]byte
}

// gatherer is a PathSocket that sends a Message's gather slices after
// Buf[:N] in the same datagram; the engine then leaves large payloads in
// the message being sent instead of copying them into the datagram
// buffer. Sockets that do not implement it (custom and simulated ones)
// get whole datagrams in Buf.
type gatherer interface {
	// gatherMin is the smallest payload worth gathering.
	gatherMin() int
}

// PathSocket is one path's UDP socket as the engine uses it. Each path of
// an endpoint has its own socket, and so its own source port: the ECMP
// entropy that spreads paths over a fabric's routes. The UDP
// implementation is the default; tests interpose on it (to drop, reorder
// or corrupt datagrams) or replace it with a simulated fabric.
//
// ReadBatch and WriteBatch may run concurrently with each other, but the
// engine never calls either from two goroutines at once.
type PathSocket interface {
	// LocalAddr is the address the socket is bound to.
	LocalAddr() netip.AddrPort
	// ReadBatch blocks until at least one datagram has arrived, fills
	// ms[:n] and returns n. After Close it returns an error wrapping
	// net.ErrClosed. A datagram longer than its Buf is cut to len(Buf).
	// The buffers the engine passes are at least ReadBufferSize long.
	ReadBatch(ms []Message) (int, error)
	// WriteBatch sends ms[i].Buf[:ms[i].N] to ms[i].Addr for every i, in
	// order, and returns how many were handed to the network. An error
	// with n < len(ms) concerns ms[n].
	WriteBatch(ms []Message) (int, error)
	// Close releases the socket and ends a blocked ReadBatch.
	Close() error
}

// ReadBufferSize is the length of the engine's read buffers: room for the
// largest datagram or GRO train.
const ReadBufferSize = 65536

// SocketOpener opens the socket of path index path, bound to addr.
type SocketOpener func(path int, addr netip.AddrPort) (PathSocket, error)

// batchConn is the part of golang.org/x/net's ipv4 and ipv6 PacketConns
// that a udpSocket uses (recvmmsg and sendmmsg on Linux).
type batchConn interface {
	ReadBatch(ms []ipv4.Message, flags int) (int, error)
	WriteBatch(ms []ipv4.Message, flags int) (int, error)
}

// udpSocket is a PathSocket over a plain *net.UDPConn, reading and writing
// in batches with golang.org/x/net. It does not report ECN marks and uses
// no segmentation offload; OpenUDPIO's socket does both.
type udpSocket struct {
	conn  *net.UDPConn
	batch batchConn
	local netip.AddrPort

	rd []ipv4.Message // read scratch, used by the one reader
	wr []ipv4.Message // write scratch, used by the one writer
	// dst caches the *net.UDPAddr of each destination, since the batch
	// calls want net.Addr values. At most maxAddrCache entries.
	dst map[netip.AddrPort]*net.UDPAddr
}

// maxAddrCache bounds a udpSocket's destination address cache; it is
// cleared when full.
const maxAddrCache = 4096

// OpenUDP opens a UDP socket bound to addr with read and write buffers of
// bufBytes each (the kernel may cap them: net.core.rmem_max).
func OpenUDP(addr netip.AddrPort, bufBytes int) (PathSocket, error) {
	network := "udp4"
	if addr.Addr().Is6() && !addr.Addr().Is4In6() {
		network = "udp6"
	}
	conn, err := net.ListenUDP(network, net.UDPAddrFromAddrPort(addr))
	if err != nil {
		return nil, fmt.Errorf("mrtransport: listen %v: %w", addr, err)
	}
	if bufBytes > 0 {
		// Best effort: a smaller buffer only costs drops under bursts.
		_ = conn.SetReadBuffer(bufBytes)
		_ = conn.SetWriteBuffer(bufBytes)
	}
	s := &udpSocket{conn: conn, dst: make(map[netip.AddrPort]*net.UDPAddr)}
	if network == "udp4" {
		s.batch = ipv4.NewPacketConn(conn)
	} else {
		s.batch = ipv6.NewPacketConn(conn)
	}
	s.local = conn.LocalAddr().(*net.UDPAddr).AddrPort()
	if s.local.Addr().Is4In6() {
		s.local = netip.AddrPortFrom(s.local.Addr().Unmap(), s.local.Port())
	}
	return s, nil
}

func (s *udpSocket) LocalAddr() netip.AddrPort { return s.local }

func (s *udpSocket) ReadBatch(ms []Message) (int, error) {
	if len(s.rd) < len(ms) {
		s.rd = make([]ipv4.Message, len(ms))
		for i := range s.rd {
			s.rd[i].Buffers = make([][]byte, 1)
		}
	}
	rd := s.rd[:len(ms)]
	for i := range ms {
		rd[i].Buffers[0] = ms[i].Buf
	}
	n, err := s.batch.ReadBatch(rd, 0)
	for i := range n {
		ms[i].N, ms[i].CE, ms[i].Segment = rd[i].N, false, 0
		if ua, ok := rd[i].Addr.(*net.UDPAddr); ok {
			ms[i].Addr = ua.AddrPort()
		}
		rd[i].Buffers[0], rd[i].Addr = nil, nil
	}
	if n > 0 {
		return n, nil
	}
	if err == nil {
		err = errors.New("mrtransport: empty read")
	}
	return 0, err
}

func (s *udpSocket) WriteBatch(ms []Message) (int, error) {
	if len(s.wr) < len(ms) {
		s.wr = make([]ipv4.Message, len(ms))
		for i := range s.wr {
			s.wr[i].Buffers = make([][]byte, 1)
		}
	}
	wr := s.wr[:len(ms)]
	for i := range ms {
		wr[i].Buffers[0] = ms[i].Buf[:ms[i].N]
		wr[i].Addr = s.udpAddr(ms[i].Addr)
	}
	done := 0
	for done < len(wr) {
		n, err := s.batch.WriteBatch(wr[done:], 0)
		done += max(n, 0)
		if err != nil {
			return done, err
		}
		if n == 0 {
			return done, syscall.EAGAIN
		}
	}
	return done, nil
}

func (s *udpSocket) udpAddr(a netip.AddrPort) *net.UDPAddr {
	if ua, ok := s.dst[a]; ok {
		return ua
	}
	if len(s.dst) >= maxAddrCache {
		clear(s.dst)
	}
	ua := net.UDPAddrFromAddrPort(a)
	s.dst[a] = ua
	return ua
}

func (s *udpSocket) Close() error { return s.conn.Close() }
