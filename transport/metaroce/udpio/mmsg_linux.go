package udpio

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The batches are made with raw recvmmsg/sendmmsg calls rather than
// golang.org/x/net's ipv4.PacketConn ReadBatch/WriteBatch because x/net
// returns each source address as a new *net.UDPAddr, two allocations per
// received datagram; here the addresses are parsed straight into
// netip.AddrPort values and nothing is allocated per call.

// Iovecs per entry: a reader's, Buf and up to MaxGather more; a writer's,
// Buf and up to MaxTrainGather more (a train gathered from its pieces).
const (
	readIovSlots  = 1 + MaxGather
	writeIovSlots = 1 + MaxTrainGather
)

// headers is the reusable state of one recvmmsg or sendmmsg call: a header,
// slots iovecs, a socket address and a control buffer per entry.
type headers struct {
	v6     bool // the socket is AF_INET6
	hs     []unix.Mmsghdr
	iovs   []unix.Iovec
	slots  int    // iovecs per entry
	names  []byte // sockaddrSlot bytes per entry
	oob    []byte // oobLen bytes per entry
	oobLen int
}

func (h *headers) init(n, oobLen, slots int, v6 bool) {
	h.v6 = v6
	h.hs = make([]unix.Mmsghdr, n)
	h.iovs = make([]unix.Iovec, n*slots)
	h.slots = slots
	h.names = make([]byte, n*sockaddrSlot)
	h.oob = make([]byte, n*oobLen)
	h.oobLen = oobLen
}

// set fills entry i to move buf followed by the gather slices (at most
// slots-1), with name bytes of the address buffer and ctl bytes of the
// control buffer.
func (h *headers) set(i int, buf []byte, gather [][]byte, name, ctl int) {
	iovs := h.iovs[i*h.slots : i*h.slots+1+len(gather)]
	for k := range iovs {
		b := buf
		if k > 0 {
			b = gather[k-1]
		}
		setIov(&iovs[k], b)
	}
	h.finish(i, iovs, name, ctl)
}

// setRange fills entry i as set does, but to move only bytes [off, off+n)
// of buf and the gather slices taken back to back (one datagram of a
// train, or several for GSO): the iovecs of the slices that range covers,
// the first and last cut to it.
func (h *headers) setRange(i int, buf []byte, gather [][]byte, off, n, name, ctl int) {
	iovs := h.iovs[i*h.slots : i*h.slots : (i+1)*h.slots]
	for k := -1; k < len(gather) && n > 0; k++ {
		b := buf
		if k >= 0 {
			b = gather[k]
		}
		if off >= len(b) {
			off -= len(b)
			continue
		}
		b = b[off:min(len(b), off+n)]
		off, n = 0, n-len(b)
		iovs = iovs[:len(iovs)+1]
		setIov(&iovs[len(iovs)-1], b)
	}
	if len(iovs) == 0 { // an empty datagram: one empty iovec, as set gives
		iovs = iovs[:1]
		setIov(&iovs[0], nil)
	}
	h.finish(i, iovs, name, ctl)
}

func setIov(iov *unix.Iovec, b []byte) {
	iov.Base = nil
	if len(b) > 0 {
		iov.Base = &b[0]
	}
	iov.SetLen(len(b))
}

// finish fills entry i's header for iovs (its first iovecs), name and ctl.
func (h *headers) finish(i int, iovs []unix.Iovec, name, ctl int) {
	hdr := &h.hs[i].Hdr
	*hdr = unix.Msghdr{Iov: &iovs[0]}
	hdr.SetIovlen(len(iovs))
	if name > 0 {
		hdr.Name = &h.names[i*sockaddrSlot]
		hdr.Namelen = uint32(name)
	}
	if ctl > 0 {
		hdr.Control = &h.oob[i*h.oobLen]
		hdr.SetControllen(ctl)
	}
	h.hs[i].Len = 0
}

// rawCallMax is the most bytes a recvmmsg or sendmmsg may move (for a
// read: the room its buffers offer) for it to be made as a raw system call.
// A raw call does not tell the runtime it is in the kernel, so it does not
// wake the runtime's monitor thread (sysmon) when that sleeps, as it does
// whenever the process was idle: on a host with more busy threads than
// cores, that wake-up and sleep cost every small message (4 processes on 2
// cores exchanging 4,200 8-byte AllReduces: ordinary calls kept sysmon
// polling, 33 thousand of its sleeps against 3 thousand with raw reads,
// and twice the context switches). The descriptor is non-blocking, so a raw call
// never waits; but the runtime cannot hand its processor to another
// goroutine meanwhile, so only calls that copy at most about a default
// batch (16 datagrams of 64 KiB, some 100 us of copying) are made raw.
const rawCallMax = 1 << 20

// mmsg runs recvmmsg or sendmmsg (trap) over the first cnt entries.
func (h *headers) mmsg(trap, fd uintptr, cnt, flags int) (int, unix.Errno) {
	bytes := 0
	for i := range cnt {
		used := int(h.hs[i].Hdr.Iovlen)
		for _, iov := range h.iovs[i*h.slots : i*h.slots+used] {
			bytes += int(iov.Len)
		}
	}
	call := unix.Syscall6
	if bytes <= rawCallMax {
		call = unix.RawSyscall6
	}
	n, _, e := call(trap, fd, uintptr(unsafe.Pointer(&h.hs[0])), uintptr(cnt), uintptr(flags), 0, 0)
	return int(n), e
}

// release drops the references to the caller's buffers held by the first n
// entries, so that the socket does not keep them alive.
func (h *headers) release(n int) {
	for i := range n * h.slots {
		h.iovs[i].Base = nil
	}
}

// reader holds the state of ReadBatch.
type reader struct {
	headers
	recvFn func(fd uintptr) bool // r.recv, bound once so calls do not allocate
	cnt    int                   // entries to receive
	flags  int                   // recvmmsg flags: MSG_PEEK|MSG_TRUNC for a peek
	n      int                   // entries received
	errno  unix.Errno
	// eachReads counts each's recvmmsg calls (tests check that a short
	// batch is not followed by a read that finds nothing).
	eachReads int
	// eachSets counts the entries each set up (tests check that it does
	// not set up the whole batch for every read).
	eachSets int
}

func (r *reader) init(batch int, v6 bool) {
	r.headers.init(batch, readControlLen, readIovSlots, v6)
	r.recvFn = r.recv
}

// recv runs recvmmsg on fd; it returns false to wait for readability.
func (r *reader) recv(fd uintptr) bool {
	for {
		n, e := r.mmsg(unix.SYS_RECVMMSG, fd, r.cnt, r.flags)
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		case 0:
			r.n, r.errno = int(n), 0
		default:
			r.n, r.errno = 0, e
		}
		return true
	}
}

func (r *reader) read(s *Socket, ms []Message) (int, error) {
	r.cnt = min(len(ms), len(r.hs))
	for i := range r.cnt {
		if len(ms[i].Gather) > MaxGather {
			return 0, fmt.Errorf("%w: message %d has %d slices", errBadGather, i, len(ms[i].Gather))
		}
		r.set(i, ms[i].Buf, ms[i].Gather, sockaddrSlot, r.oobLen)
	}
	r.flags = 0
	if err := r.call(s); err != nil {
		return 0, err
	}
	for i := range r.n {
		r.unpack(i, &ms[i], false)
	}
	return r.n, nil
}

// peek is read of one datagram with MSG_PEEK|MSG_TRUNC: the datagram stays
// queued and m.N is its whole length.
func (r *reader) peek(s *Socket, m *Message) error {
	r.cnt = 1
	r.set(0, m.Buf, nil, sockaddrSlot, r.oobLen)
	r.flags = unix.MSG_PEEK | unix.MSG_TRUNC
	if err := r.call(s); err != nil {
		return err
	}
	r.unpack(0, m, true)
	return nil
}

// call runs the prepared recvmmsg, waiting for readability.
func (r *reader) call(s *Socket) error {
	err := s.raw.Read(r.recvFn)
	r.release(r.cnt)
	if err != nil {
		return err
	}
	if r.errno != 0 {
		s.errsPending.Store(true)
		return os.NewSyscallError("recvmmsg", r.errno)
	}
	return nil
}

// unpack fills m from received entry i. N is the bytes received into Buf
// and Gather, or with whole the datagram's length (MSG_TRUNC).
func (r *reader) unpack(i int, m *Message, whole bool) {
	h := &r.hs[i]
	room := len(m.Buf)
	for _, g := range m.Gather {
		room += len(g)
	}
	m.N = int(h.Len)
	if !whole {
		m.N = min(m.N, room)
	}
	m.Truncated = h.Hdr.Flags&unix.MSG_TRUNC != 0
	name := r.names[i*sockaddrSlot:][:min(int(h.Hdr.Namelen), sockaddrSlot)]
	m.Addr, _ = parseSockaddr(name) // the kernel always gives AF_INET(6)
	ctl := parseControl(r.oob[i*r.oobLen:][:min(int(h.Hdr.Controllen), r.oobLen)])
	m.Segment = 0
	if ctl.gso > 0 && m.N > ctl.gso {
		m.Segment = ctl.gso
	}
	m.CE = ctl.ce()
	m.Class = ctl.class()
	m.Received = ctl.stamp
	if h.Hdr.Flags&unix.MSG_CTRUNC != 0 {
		m.Received = 0 // the stamp may be the cut message: no time
	}
}
