package udpio

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"strconv"

	"golang.org/x/sys/unix"
)

// Raw Linux socket addresses, as the kernel reads and writes them in a
// msghdr's name: sockaddr_in (16 bytes) and sockaddr_in6 (28 bytes). The
// family is in host byte order, the port in network byte order.
const (
	sockaddrInet4Len = unix.SizeofSockaddrInet4
	sockaddrInet6Len = unix.SizeofSockaddrInet6
	sockaddrSlot     = sockaddrInet6Len // room kept per message
)

var errBadSockaddr = errors.New("udpio: bad socket address")

// putSockaddr writes ap into b (at least sockaddrSlot bytes) in the layout of
// a socket of family v6 (AF_INET6) or not (AF_INET) and returns its length.
// An AF_INET6 socket reaches IPv4 addresses through their v4-mapped form.
func putSockaddr(b []byte, ap netip.AddrPort, v6 bool) (int, error) {
	a := ap.Addr()
	if !a.IsValid() {
		return 0, errBadSockaddr
	}
	if !v6 {
		a = a.Unmap()
		if !a.Is4() {
			return 0, errors.New("udpio: IPv6 destination on an IPv4 socket")
		}
		clear(b[:sockaddrInet4Len])
		binary.NativeEndian.PutUint16(b[0:2], unix.AF_INET)
		binary.BigEndian.PutUint16(b[2:4], ap.Port())
		a4 := a.As4()
		copy(b[4:8], a4[:])
		return sockaddrInet4Len, nil
	}
	clear(b[:sockaddrInet6Len])
	binary.NativeEndian.PutUint16(b[0:2], unix.AF_INET6)
	binary.BigEndian.PutUint16(b[2:4], ap.Port())
	a16 := a.As16()
	copy(b[8:24], a16[:])
	if z := a.Zone(); z != "" {
		binary.NativeEndian.PutUint32(b[24:28], zoneIndex(z))
	}
	return sockaddrInet6Len, nil
}

// parseSockaddr reads a raw socket address written by the kernel. IPv4
// addresses come back plain, v4-mapped ones unmapped.
func parseSockaddr(b []byte) (netip.AddrPort, error) {
	if len(b) < 2 {
		return netip.AddrPort{}, errBadSockaddr
	}
	switch binary.NativeEndian.Uint16(b[0:2]) {
	case unix.AF_INET:
		if len(b) < sockaddrInet4Len {
			return netip.AddrPort{}, errBadSockaddr
		}
		a := netip.AddrFrom4([4]byte(b[4:8]))
		return netip.AddrPortFrom(a, binary.BigEndian.Uint16(b[2:4])), nil
	case unix.AF_INET6:
		if len(b) < sockaddrInet6Len {
			return netip.AddrPort{}, errBadSockaddr
		}
		a := netip.AddrFrom16([16]byte(b[8:24])).Unmap()
		if scope := binary.NativeEndian.Uint32(b[24:28]); scope != 0 && a.Is6() {
			a = a.WithZone(strconv.FormatUint(uint64(scope), 10))
		}
		return netip.AddrPortFrom(a, binary.BigEndian.Uint16(b[2:4])), nil
	}
	return netip.AddrPort{}, errBadSockaddr
}

// zoneIndex returns the interface index of an IPv6 zone, given as a number
// or an interface name; 0 if unknown.
func zoneIndex(zone string) uint32 {
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return uint32(n)
	}
	if ifc, err := net.InterfaceByName(zone); err == nil {
		return uint32(ifc.Index)
	}
	return 0
}
