package udpio

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// setup sets the socket options cfg asks for, records the capabilities the
// kernel granted and sizes the batch state.
func (s *Socket) setup(cfg Config) error {
	var caps Caps
	var v6 bool
	var err error
	cerr := s.raw.Control(func(fd uintptr) {
		caps, v6, err = configure(int(fd), cfg)
	})
	if cerr != nil {
		return cerr
	}
	if err != nil {
		return err
	}
	s.caps = caps
	s.rd.init(cfg.BatchSize, v6)
	s.wr.init(cfg.BatchSize, v6)
	s.eq.recvFn = s.eq.recv
	return nil
}

// configure sets the options of socket fd and reports what the kernel took
// and whether the socket is AF_INET6.
func configure(fd int, cfg Config) (Caps, bool, error) {
	caps := Caps{Batch: true, Peek: true}
	domain, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return caps, false, err
	}
	v6 := domain == unix.AF_INET6
	caps.ReadBuffer, err = setBuffer(fd, unix.SO_RCVBUFFORCE, unix.SO_RCVBUF, cfg.ReadBuffer)
	if err != nil {
		return caps, v6, err
	}
	caps.WriteBuffer, err = setBuffer(fd, unix.SO_SNDBUFFORCE, unix.SO_SNDBUF, cfg.WriteBuffer)
	if err != nil {
		return caps, v6, err
	}
	if !cfg.DisableGSO {
		// getsockopt(UDP_SEGMENT) succeeds on kernels that know GSO (4.18+).
		_, err := unix.GetsockoptInt(fd, unix.SOL_UDP, unix.UDP_SEGMENT)
		caps.GSO = err == nil
	}
	if !cfg.DisableGRO {
		caps.GRO = unix.SetsockoptInt(fd, unix.SOL_UDP, unix.UDP_GRO, 1) == nil
	}
	if !cfg.DisableECN {
		caps.ECN = enableECN(fd, v6) == nil
	}
	caps.ErrQueue = enableRecvErr(fd, v6) == nil
	if !cfg.DisableTimestamps {
		caps.Timestamps = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil
	}
	return caps, v6, nil
}

// setBuffer asks for a socket buffer of size bytes, first with the forcing
// option (root only), then the plain one, and returns the size granted.
func setBuffer(fd, force, plain, size int) (int, error) {
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, force, size) != nil {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, plain, size); err != nil {
			return 0, err
		}
	}
	got, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, plain)
	if err != nil {
		return 0, err
	}
	return got / 2, nil
}

// enableECN marks outgoing datagrams ECT(0) and asks for the ECN bits of
// incoming ones. An AF_INET6 socket also sets the IPv4 options, for the
// v4-mapped traffic of a dual-stack socket; an IPv6-only socket may refuse
// them, which is not an error.
func enableECN(fd int, v6 bool) error {
	if v6 {
		err := errors.Join(
			unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_TCLASS, ecnECT0),
			unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS, 1))
		if err != nil {
			return err
		}
	}
	err := errors.Join(
		unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_TOS, ecnECT0),
		unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_RECVTOS, 1))
	if v6 {
		return nil
	}
	return err
}

// bindControl returns the net.ListenConfig Control that binds a socket to
// device (SO_BINDTODEVICE) before its address, or nil for no device.
func bindControl(device string) func(network, address string, c syscall.RawConn) error {
	if device == "" {
		return nil
	}
	return func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) { err = unix.BindToDevice(int(fd), device) }); cerr != nil {
			return cerr
		}
		if err != nil {
			return fmt.Errorf("SO_BINDTODEVICE %s: %w", device, err)
		}
		return nil
	}
}
