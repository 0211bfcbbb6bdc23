package mrtransport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"

	"github.com/gocoll/gocoll/transport/metaroce"
)

// PortRange is a range of UDP ports, Lo to Hi inclusive, for
// Config.PortRange. The zero value is no range.
type PortRange struct {
	Lo, Hi uint16
}

// IsZero reports whether r is the zero value (no range).
func (r PortRange) IsZero() bool { return r == PortRange{} }

// Len is the number of ports in r (0 for the zero value).
func (r PortRange) Len() int {
	if r.IsZero() || r.Lo > r.Hi {
		return 0
	}
	return int(r.Hi) - int(r.Lo) + 1
}

// String formats r as "Lo-Hi", the form [ParsePortRange] reads, and the
// zero value as "".
func (r PortRange) String() string {
	if r.IsZero() {
		return ""
	}
	return fmt.Sprintf("%d-%d", r.Lo, r.Hi)
}

// check returns an error unless r is the zero value or 1 <= Lo <= Hi.
func (r PortRange) check() error {
	if r.IsZero() {
		return nil
	}
	if r.Lo == 0 || r.Lo > r.Hi {
		return fmt.Errorf("port range %d-%d: want 1 <= low <= high <= 65535", r.Lo, r.Hi)
	}
	return nil
}

// ParsePortRange parses "LO-HI" (such as "50000-50999", both ends
// included) or a single port "P" (the range P-P), with 1 <= LO <= HI <=
// 65535. The empty string is the zero PortRange (no range).
func ParsePortRange(s string) (PortRange, error) {
	if s == "" {
		return PortRange{}, nil
	}
	lo, hi, found := strings.Cut(s, "-")
	if !found {
		hi = lo
	}
	port := func(p string) (uint16, error) {
		v, err := strconv.ParseUint(strings.TrimSpace(p), 10, 16)
		if err != nil || v == 0 {
			return 0, fmt.Errorf("mrtransport: port range %q: %q is not a port (1 to 65535)", s, p)
		}
		return uint16(v), nil
	}
	l, err := port(lo)
	if err != nil {
		return PortRange{}, err
	}
	h, err := port(hi)
	if err != nil {
		return PortRange{}, err
	}
	r := PortRange{Lo: l, Hi: h}
	if err := r.check(); err != nil {
		return PortRange{}, fmt.Errorf("mrtransport: %w", err)
	}
	return r, nil
}

// ParseInterfaces parses a comma-separated list of interface names and
// local IP addresses (such as "eth1,eth2" or "10.0.1.5,10.0.2.5"), the
// form of Config.Interfaces: 1 to metaroce.MaxPaths entries, each an IP
// address or a name of 1 to 15 bytes without white space, '/', ',' or
// '%'. Spaces around entries are ignored. The empty string is no list.
func ParseInterfaces(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if err := checkInterface(part); err != nil {
			return nil, fmt.Errorf("mrtransport: interfaces %q: %w", s, err)
		}
		out = append(out, part)
	}
	if len(out) > metaroce.MaxPaths {
		return nil, fmt.Errorf("mrtransport: interfaces %q: %d entries, at most %d", s, len(out), metaroce.MaxPaths)
	}
	return out, nil
}

// maxIfName is the longest interface name (Linux's IFNAMSIZ less its NUL).
const maxIfName = 15

// checkInterface checks one Config.Interfaces entry's form.
func checkInterface(s string) error {
	if _, err := netip.ParseAddr(s); err == nil {
		return nil
	}
	if s == "" || len(s) > maxIfName || strings.ContainsAny(s, "/,% \t\n\r\x00") {
		return fmt.Errorf("%q is neither an IP address nor an interface name (1 to %d bytes, no space, '/', ',' or '%%')", s, maxIfName)
	}
	return nil
}

// pathBind is where one path socket binds: an address and, if not empty,
// a device (SO_BINDTODEVICE).
type pathBind struct {
	addr   netip.Addr
	device string
}

// resolveBinds returns each path's bind from cfg (defaults filled in):
// ListenAddr's address, or the entry of Interfaces for the path.
func resolveBinds(cfg Config) ([]pathBind, error) {
	binds := make([]pathBind, cfg.Paths)
	if len(cfg.Interfaces) == 0 {
		for i := range binds {
			binds[i].addr = cfg.ListenAddr.Addr()
		}
		return binds, nil
	}
	v6 := cfg.ListenAddr.Addr().Is6() && !cfg.ListenAddr.Addr().Is4In6()
	resolved := make([]pathBind, len(cfg.Interfaces))
	for j, name := range cfg.Interfaces {
		if a, err := netip.ParseAddr(name); err == nil {
			resolved[j] = pathBind{addr: a}
			continue
		}
		a, err := interfaceAddr(name, v6)
		if err != nil {
			return nil, err
		}
		resolved[j] = pathBind{addr: a, device: name}
	}
	for i := range binds {
		binds[i] = resolved[i%len(resolved)]
	}
	return binds, nil
}

// interfaceAddr returns the first address of interface name in the
// family asked for, preferring global addresses to link-local ones.
func interfaceAddr(name string, v6 bool) (netip.Addr, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("mrtransport: interface %s: %w", name, err)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("mrtransport: interface %s: %w", name, err)
	}
	var best netip.Addr
	for _, a := range addrs {
		pfx, err := netip.ParsePrefix(a.String())
		if err != nil {
			continue
		}
		ip := pfx.Addr().Unmap()
		if ip.Is6() != v6 {
			continue
		}
		if !best.IsValid() || best.IsLinkLocalUnicast() && !ip.IsLinkLocalUnicast() {
			best = ip
		}
	}
	if !best.IsValid() {
		family := "IPv4"
		if v6 {
			family = "IPv6"
		}
		return netip.Addr{}, fmt.Errorf("mrtransport: interface %s has no %s address", name, family)
	}
	if best.IsLinkLocalUnicast() {
		best = best.WithZone(name)
	}
	return best, nil
}

// maxPortTries bounds the binds tried in a PortRange for one socket.
const maxPortTries = 4096

// openInRange opens path's socket at addr with a port of r: the first
// free one from a random point of r, skipping the ports in taken (already
// used by this endpoint). A port that is in use (EADDRINUSE) is skipped;
// any other error ends the search.
func openInRange(open SocketOpener, path int, addr netip.Addr, r PortRange, taken map[uint16]bool) (PathSocket, error) {
	n := r.Len()
	start := rand.IntN(n)
	tries := 0
	for k := range n {
		port := uint16(int(r.Lo) + (start+k)%n)
		if taken[port] {
			continue
		}
		if tries == maxPortTries {
			break
		}
		tries++
		s, err := open(path, netip.AddrPortFrom(addr, port))
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("mrtransport: no free UDP port on %v in PortRange %v (%d tried)", addr, r, tries)
}

// isAddr reports whether an Interfaces entry is an IP address.
func isAddr(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}
