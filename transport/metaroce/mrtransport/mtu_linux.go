package mrtransport

import (
	"fmt"
	"net"
	"net/netip"

	"golang.org/x/sys/unix"
)

// mtuSupported: this system's MTUs are read (interfaces' and routes').
const mtuSupported = true

// routeMTU returns the MTU of the route from b to remote: the IP_MTU (or
// IPV6_MTU) of a UDP socket bound as b and connected to remote, which
// counts the route's MTU and what path MTU discovery has learnt. No packet
// is sent.
func routeMTU(b pathBind, remote netip.AddrPort) (int, error) {
	raddr := remote.Addr().Unmap()
	local := b.addr.Unmap()
	v6 := raddr.Is6()
	if local.IsValid() && !local.IsUnspecified() && local.Is6() != v6 {
		return 0, fmt.Errorf("mrtransport: route MTU from %v to %v: families differ", b.addr, remote)
	}
	family, level, opt := unix.AF_INET, unix.IPPROTO_IP, unix.IP_MTU
	if v6 {
		family, level, opt = unix.AF_INET6, unix.IPPROTO_IPV6, unix.IPV6_MTU
	}
	fd, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	if b.device != "" {
		if err := unix.BindToDevice(fd, b.device); err != nil {
			return 0, err
		}
	}
	if local.IsValid() && !local.IsUnspecified() {
		if err := unix.Bind(fd, sockaddr(netip.AddrPortFrom(local, 0), b.addr.Zone())); err != nil {
			return 0, err
		}
	}
	if err := unix.Connect(fd, sockaddr(netip.AddrPortFrom(raddr, remote.Port()), remote.Addr().Zone())); err != nil {
		return 0, err
	}
	return unix.GetsockoptInt(fd, level, opt)
}

// sockaddr converts a to a unix.Sockaddr (IPv6 with zone's index).
func sockaddr(a netip.AddrPort, zone string) unix.Sockaddr {
	if a.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(a.Port()), Addr: a.Addr().As4()}
	}
	sa := &unix.SockaddrInet6{Port: int(a.Port()), Addr: a.Addr().As16()}
	if zone != "" {
		if ifi, err := net.InterfaceByName(zone); err == nil {
			sa.ZoneId = uint32(ifi.Index)
		}
	}
	return sa
}
