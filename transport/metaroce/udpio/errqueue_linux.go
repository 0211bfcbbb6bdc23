package udpio

import (
	"encoding/binary"
	"net/netip"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// With IP_RECVERR (IPV6_RECVERR) set, Linux queues every ICMP error about
// a datagram the socket sent, and reads of the queue (recvmsg with
// MSG_ERRQUEUE) return one error each: in msg_name the original datagram's
// destination, and in a control message of type IP_RECVERR (IPV6_RECVERR)
// a struct sock_extended_err, then the address of the node that sent the
// ICMP.

const (
	// sockErrLen is the length of struct sock_extended_err: ee_errno
	// (u32), ee_origin, ee_type, ee_code, ee_pad (u8 each), ee_info and
	// ee_data (u32 each), in host byte order.
	sockErrLen = int(unsafe.Sizeof(unix.SockExtendedErr{}))
	// errControlLen is the control buffer of one error read: the error
	// with the ICMP sender's address, and the IP_TOS / IPV6_TCLASS
	// messages the kernel puts before it, with room to spare.
	errControlLen = 256
)

// sockErr is the part of a queued error (struct sock_extended_err) that
// DrainErrors looks at.
type sockErr struct {
	errno     unix.Errno
	origin    uint8 // SO_EE_ORIGIN_*: who reported it
	typ, code uint8 // the ICMP type and code, for an ICMP origin
}

// portUnreachable reports whether e is an ICMP or ICMPv6 port unreachable:
// no socket was bound to the destination port.
func (e sockErr) portUnreachable() bool {
	icmp := e.origin == unix.SO_EE_ORIGIN_ICMP || e.origin == unix.SO_EE_ORIGIN_ICMP6
	return icmp && e.errno == unix.ECONNREFUSED
}

// parseSockErr finds the IP_RECVERR or IPV6_RECVERR control message in oob,
// the control data of an error-queue read, and reads its error. It reports
// false if there is none, or if it is too short; it never fails otherwise.
func parseSockErr(oob []byte) (sockErr, bool) {
	w := cmsgs{oob}
	for {
		level, typ, data, ok := w.next()
		if !ok {
			return sockErr{}, false
		}
		isErr := level == unix.IPPROTO_IP && typ == unix.IP_RECVERR ||
			level == unix.IPPROTO_IPV6 && typ == unix.IPV6_RECVERR
		if isErr && len(data) >= sockErrLen {
			return sockErr{
				errno:  unix.Errno(binary.NativeEndian.Uint32(data[0:4])),
				origin: data[4], typ: data[5], code: data[6],
			}, true
		}
	}
}

// errReader holds the state of DrainErrors.
type errReader struct {
	hdr    unix.Msghdr
	name   [sockaddrSlot]byte
	oob    [errControlLen]byte
	recvFn func(fd uintptr) // q.recv, bound once so calls do not allocate
	errno  unix.Errno
}

// recv reads one error from fd's error queue without waiting.
func (q *errReader) recv(fd uintptr) {
	q.hdr = unix.Msghdr{Name: &q.name[0], Namelen: sockaddrSlot, Control: &q.oob[0]}
	q.hdr.SetControllen(len(q.oob))
	flags := unix.MSG_ERRQUEUE | unix.MSG_DONTWAIT
	for {
		_, _, e := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&q.hdr)), uintptr(flags))
		if e != unix.EINTR {
			q.errno = e
			return
		}
	}
}

// drain is DrainErrors; the caller holds s.emu.
func (q *errReader) drain(s *Socket, refused []netip.AddrPort) ([]netip.AddrPort, int, error) {
	other := 0
	for range MaxErrorReads {
		// Control, not Read: it neither waits for readability nor takes
		// the read lock that a blocked ReadBatch holds.
		if err := s.raw.Control(q.recvFn); err != nil {
			return refused, other, err
		}
		switch q.errno {
		case 0:
		case unix.EAGAIN:
			return refused, other, nil
		default:
			return refused, other, os.NewSyscallError("recvmsg", q.errno)
		}
		if dst, ok := q.refused(); ok {
			refused = append(refused, dst)
		} else {
			other++
		}
	}
	return refused, other, nil
}

// refused returns the destination of the datagram whose error was just
// read, if the error is a port unreachable.
func (q *errReader) refused() (netip.AddrPort, bool) {
	e, ok := parseSockErr(q.oob[:min(int(q.hdr.Controllen), len(q.oob))])
	if !ok || !e.portUnreachable() {
		return netip.AddrPort{}, false
	}
	dst, err := parseSockaddr(q.name[:min(int(q.hdr.Namelen), len(q.name))])
	return dst, err == nil
}

// enableRecvErr asks the kernel to queue the ICMP errors about the
// datagrams the socket sends. An AF_INET6 socket also sets the IPv4
// option, for the v4-mapped traffic of a dual-stack socket; an IPv6-only
// socket may refuse it, which is not an error.
func enableRecvErr(fd int, v6 bool) error {
	err4 := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_RECVERR, 1)
	if v6 {
		return unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVERR, 1)
	}
	return err4
}
