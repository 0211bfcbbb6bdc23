package mrtransport

import (
	"net"
	"net/netip"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// Header sizes DatagramForMTU takes off an MTU.
const (
	ipv4Header = 20
	ipv6Header = 40
	udpHeader  = 8
)

// DatagramForMTU returns the largest UDP payload that one IP packet of mtu
// bytes carries unfragmented: mtu less the IP header (20 bytes for IPv4,
// 40 for IPv6, without options or extension headers) and the 8-byte UDP
// header, within [wire.MinDatagram, wire.MaxDatagram]. So 1500 gives 1472
// (IPv4) or 1452 (IPv6), 9000 gives 8972 or 8952, and loopback's 65536 the
// 65507-byte UDP limit (IPv4) or 65488 (IPv6).
func DatagramForMTU(mtu int, v6 bool) int {
	hdr := ipv4Header + udpHeader
	if v6 {
		hdr = ipv6Header + udpHeader
	}
	return min(max(mtu-hdr, wire.MinDatagram), wire.MaxDatagram)
}

// is6 reports whether a is an IPv6 address that is not IPv4-mapped.
func is6(a netip.Addr) bool { return a.Is6() && !a.Is4In6() }

// interfaceMTU returns the MTU of the interface that b binds: its device,
// or the interface holding its address, or for the unspecified address
// the largest MTU of the interfaces that are up and not loopback. ok is
// false when none is found.
func interfaceMTU(b pathBind) (mtu int, ok bool) {
	if b.device != "" {
		ifi, err := net.InterfaceByName(b.device)
		if err != nil {
			return 0, false
		}
		return ifi.MTU, ifi.MTU > 0
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return 0, false
	}
	want := b.addr.WithZone("").Unmap()
	for _, ifi := range ifs {
		if want.IsUnspecified() {
			if ifi.Flags&net.FlagUp != 0 && ifi.Flags&net.FlagLoopback == 0 && ifi.MTU > mtu {
				mtu = ifi.MTU
			}
			continue
		}
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Unmap() == want {
				return ifi.MTU, ifi.MTU > 0
			}
		}
	}
	return mtu, mtu > 0
}

// listenDatagram returns the MaxDatagram an endpoint offers when it is
// sized from the MTU: DatagramForMTU of the smallest interfaceMTU over the
// paths' binds, or DefaultNICDatagram where the MTU is not read (see
// mtuSupported) or no bind's interface is found.
func listenDatagram(binds []pathBind, v6 bool) int {
	if !mtuSupported {
		return DefaultNICDatagram
	}
	best := 0
	for _, b := range binds {
		mtu, ok := interfaceMTU(b)
		if !ok {
			continue
		}
		if d := DatagramForMTU(mtu, v6); best == 0 || d < best {
			best = d
		}
	}
	if best == 0 {
		return DefaultNICDatagram
	}
	return best
}

// routeKey caches routeDatagram's answers within one Connect.
type routeKey struct {
	bind   pathBind
	remote netip.Addr
}

// peerDatagram returns the largest datagram the routes from the binds to
// the peer's path addresses carry (DatagramForMTU of the smallest route
// MTU, path i from binds[i] to remote[i]), and false when no route's MTU
// could be read. cache is shared by the peers of one Connect.
func peerDatagram(binds []pathBind, remote []netip.AddrPort, cache map[routeKey]int) (int, bool) {
	if !mtuSupported {
		return 0, false
	}
	best := 0
	for i := range min(len(binds), len(remote)) {
		k := routeKey{binds[i], remote[i].Addr().Unmap()}
		d, seen := cache[k]
		if !seen {
			if mtu, err := routeMTU(k.bind, netip.AddrPortFrom(k.remote, remote[i].Port())); err == nil {
				d = DatagramForMTU(mtu, is6(k.remote))
			}
			cache[k] = d // 0: unknown
		}
		if d > 0 && (best == 0 || d < best) {
			best = d
		}
	}
	return best, best > 0
}
