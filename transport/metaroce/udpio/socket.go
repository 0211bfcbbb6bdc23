package udpio

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Socket is a UDP socket that reads and writes datagrams in batches. Its
// methods are safe for concurrent use; see the package doc.
type Socket struct {
	conn  *net.UDPConn
	raw   syscall.RawConn
	local netip.AddrPort
	caps  Caps // as found at Listen
	// gsoOff is set once a GSO send failed with EIO; from then on trains
	// go out as single datagrams.
	gsoOff atomic.Bool

	rmu sync.Mutex // serialises readers; guards rd
	rd  reader
	wmu sync.Mutex // serialises writers; guards wr
	wr  writer
	emu sync.Mutex // serialises DrainErrors; guards eq
	eq  errReader
	// errsPending is set when errors may be queued unseen (see
	// ErrorsPending) and cleared by DrainErrors.
	errsPending atomic.Bool
	// closing is set by Close, readDeadline (Unix nanoseconds, 0 none) by
	// SetReadDeadline: ReadEach's loop checks both between full batches,
	// where the poller, which sees them otherwise, is not asked.
	closing      atomic.Bool
	readDeadline atomic.Int64
	// unpolled is raw where Config.Unpolled took the socket out of the
	// runtime's poller (conn is then closed); nil otherwise.
	unpolled *fdConn
}

// MaxErrorReads is the most queued errors one [Socket.DrainErrors] reads.
const MaxErrorReads = 64

// Listen opens a UDP socket bound to addr (port 0 picks a free port) and
// sets it up as cfg says. An IPv4 (or v4-mapped) address gives an IPv4
// socket, the unspecified IPv6 address [::] a dual-stack socket, and any
// other IPv6 address an IPv6-only one. Options the kernel refuses (GSO, GRO,
// ECN) are left off and reported by [Socket.Caps]; a bad cfg or addr gives
// an error wrapping [ErrConfig].
func Listen(addr netip.AddrPort, cfg Config) (*Socket, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	network, addr, err := listenNetwork(addr)
	if err != nil {
		return nil, err
	}
	lc := net.ListenConfig{Control: bindControl(cfg.Device)}
	pc, err := lc.ListenPacket(context.Background(), network, addr.String())
	if err != nil {
		if cfg.Device != "" {
			return nil, fmt.Errorf("udpio: listen %s on device %s: %w", addr, cfg.Device, err)
		}
		return nil, fmt.Errorf("udpio: listen %s: %w", addr, err)
	}
	conn := pc.(*net.UDPConn)
	raw, err := conn.SyscallConn()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("udpio: listen %s: %w", addr, err)
	}
	s := &Socket{conn: conn, raw: raw, local: conn.LocalAddr().(*net.UDPAddr).AddrPort()}
	if err := s.setup(cfg); err != nil {
		conn.Close()
		return nil, fmt.Errorf("udpio: listen %s: %w", addr, err)
	}
	if cfg.Unpolled {
		if err := s.unpoll(); err != nil {
			conn.Close()
			return nil, fmt.Errorf("udpio: listen %s: %w", addr, err)
		}
	}
	return s, nil
}

// listenNetwork picks the network for net.ListenUDP.
func listenNetwork(addr netip.AddrPort) (string, netip.AddrPort, error) {
	a := addr.Addr()
	switch {
	case !a.IsValid():
		return "", addr, fmt.Errorf("%w: invalid listen address %v", ErrConfig, addr)
	case a.Is4() || a.Is4In6():
		return "udp4", netip.AddrPortFrom(a.Unmap(), addr.Port()), nil
	case a.IsUnspecified():
		return "udp", addr, nil
	}
	return "udp6", addr, nil
}

// Unpolled reports whether the runtime's poller leaves the socket alone
// (Config.Unpolled, on Linux).
func (s *Socket) Unpolled() bool { return s.unpolled != nil }

// Unpoll takes a socket opened without Config.Unpolled out of the
// runtime's poller now, as Listen does with Config.Unpolled; it does
// nothing to a socket already unpolled, nor off Linux (Unpolled tells).
// It replaces the socket's descriptor with a duplicate, so no other call
// may use s meanwhile, and a [Poller] made before it should be made anew.
func (s *Socket) Unpoll() error {
	if s.unpolled != nil {
		return nil
	}
	return s.unpoll()
}

// LocalAddr returns the address the socket is bound to.
func (s *Socket) LocalAddr() netip.AddrPort { return s.local }

// Caps returns what the socket got from the kernel. GSO turns false after a
// GSO send failed with EIO.
func (s *Socket) Caps() Caps {
	c := s.caps
	if s.gsoOff.Load() {
		c.GSO = false
	}
	return c
}

// ReadBatch blocks until at least one datagram has arrived, then fills
// ms[0:n] with up to len(ms) datagrams (at most Config.BatchSize) and
// returns n. Each ms[i].Buf must be set by the caller; N, Addr, Segment, CE
// and Truncated are overwritten. Datagrams too long for Buf are cut and
// marked Truncated (see [ReadBufferSize]). With an empty ms it returns 0 at
// once. After Close, or past a read deadline, it returns an error wrapping
// [net.ErrClosed] or [os.ErrDeadlineExceeded].
func (s *Socket) ReadBatch(ms []Message) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return s.rd.read(s, ms)
}

// ReadEach is a reader's loop: it reads batches into ms as ReadBatch does
// and calls handle(n) after each (ms[:n] filled), until handle returns
// false (then it returns nil) or a read fails (then it returns the error,
// as ReadBatch would). It saves a ReadBatch loop's system call per wait:
// after a batch shorter than len(ms) (at most Config.BatchSize) the queue
// was empty, and ReadEach waits for the next datagram at once, where a
// new ReadBatch must first try a read that finds nothing (see reader.each).
// The socket's read side is held meanwhile: other ReadBatch and Peek calls
// wait for ReadEach to return, and handle must not close the socket (Close
// waits for handle), nor change ms's Buf and Gather (every batch is read
// into the ones ms held when ReadEach was called). Close and a read deadline end it, with the errors
// ReadBatch would return, at the latest after the running handle, even
// while batches keep coming full. An empty ms is an error wrapping
// [ErrConfig].
func (s *Socket) ReadEach(ms []Message, handle func(n int) bool) error {
	if len(ms) == 0 {
		return fmt.Errorf("%w: ReadEach with no messages", ErrConfig)
	}
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return s.rd.each(s, ms, handle)
}

// Peek blocks until a datagram has arrived and fills m as ReadBatch would,
// except that the datagram stays queued (the next ReadBatch or Peek gets
// it again) and m.N is its whole length, which may exceed len(m.Buf): m.Buf
// gets its first bytes. A reader peeks at a datagram's header to decide
// where to read the rest (see Message.Gather). Errors as ReadBatch; on
// systems other than Linux it fails with an error wrapping
// errors.ErrUnsupported.
func (s *Socket) Peek(m *Message) error {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	return s.rd.peek(s, m)
}

// WriteBatch sends every message of ms: each is one datagram (Buf, then
// any Gather slices), or a train of Segment-sized datagrams (Buf and any
// Gather slices back to back, cut every Segment bytes), sent by GSO if the
// kernel allows (a train over [MaxSegments] segments or [MaxPayload] bytes
// as several GSO sends), else one by one. It blocks while the socket's send buffer is full. It returns
// len(ms) and nil, or the number of leading messages sent in full and the
// error that stopped it (a train counts as sent only when all of it went).
// A negative Segment, a Segment above [MaxSegmentSize] on a train, more
// than [MaxGather] Gather slices on a single datagram or [MaxTrainGather]
// on a train, or an invalid Addr is an error. After Close it returns an error wrapping
// [net.ErrClosed].
func (s *Socket) WriteBatch(ms []Message) (int, error) {
	if len(ms) == 0 {
		return 0, nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.wr.write(s, ms)
}

// DrainErrors reads, without waiting, the errors the kernel has queued for
// the socket (see Caps.ErrQueue), at most [MaxErrorReads] of them. It
// appends to refused the destination of every datagram that an ICMP or
// ICMPv6 port unreachable answered (no socket is bound to that port: the
// process that had it is gone, or has not opened it yet), and returns
// refused with the number of other errors read, which it does not
// describe. The error is nil when the queue was read empty or
// MaxErrorReads errors were read; after Close it wraps [net.ErrClosed].
//
// Linux also reports a queued error once, as the socket's pending error
// (ECONNREFUSED for a port unreachable), to the next ReadBatch, Peek or
// WriteBatch, whichever comes first; the queue keeps the error, in the
// receive buffer's space, until it is read. So call DrainErrors after any
// of those fails, and whenever [Socket.ErrorsPending] reports true. It
// runs concurrently with ReadBatch and WriteBatch and never waits for
// them. On systems other than Linux it returns refused, 0 and nil.
func (s *Socket) DrainErrors(refused []netip.AddrPort) ([]netip.AddrPort, int, error) {
	s.emu.Lock()
	defer s.emu.Unlock()
	s.errsPending.Store(false)
	return s.eq.drain(s, refused)
}

// ErrorsPending reports whether errors may be queued that no call
// reported, so that [Socket.DrainErrors] should run: a ReadBatch, Peek or
// WriteBatch failed, or a WriteBatch's sendmmsg stopped short of its batch
// without an error. sendmmsg reports an error only when it sent nothing,
// so a pending error it meets midway is consumed unseen while its queued
// copy stays; it also stops short when the send buffer fills, so this is
// a hint. DrainErrors clears it. It is cheap (an atomic load).
func (s *Socket) ErrorsPending() bool { return s.errsPending.Load() }

// SetReadDeadline sets the time after which a pending or later ReadBatch
// or ReadEach fails with an error wrapping os.ErrDeadlineExceeded; the
// zero time means none.
func (s *Socket) SetReadDeadline(t time.Time) error {
	s.readDeadline.Store(deadlineNs(t))
	if s.unpolled != nil {
		return s.unpolled.alive()
	}
	return s.conn.SetReadDeadline(t)
}

// deadlineNs is t in Unix nanoseconds, 0 for the zero time (no deadline).
func deadlineNs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(t.UnixNano(), 1)
}

// SetWriteDeadline is SetReadDeadline for WriteBatch.
func (s *Socket) SetWriteDeadline(t time.Time) error {
	if s.unpolled != nil {
		s.unpolled.writeDeadline.Store(deadlineNs(t))
		return s.unpolled.alive()
	}
	return s.conn.SetWriteDeadline(t)
}

// Close closes the socket and wakes pending ReadBatch and WriteBatch calls;
// a ReadEach ends after its running handle returns, even while batches
// keep coming. Closing twice returns an error wrapping net.ErrClosed.
func (s *Socket) Close() error {
	s.closing.Store(true)
	if s.unpolled != nil {
		return s.unpolled.close(s.local)
	}
	return s.conn.Close()
}
