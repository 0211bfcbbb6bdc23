//go:build !linux

package udpio

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// The portable fallback: one datagram per system call through the net
// package, no GSO, GRO or ECN, no error queue, and truncation not
// reported.

// setup sets the socket buffers; the granted sizes cannot be read back
// portably, so Caps reports the sizes asked for.
func (s *Socket) setup(cfg Config) error {
	if err := s.conn.SetReadBuffer(cfg.ReadBuffer); err != nil {
		return err
	}
	if err := s.conn.SetWriteBuffer(cfg.WriteBuffer); err != nil {
		return err
	}
	s.caps = Caps{ReadBuffer: cfg.ReadBuffer, WriteBuffer: cfg.WriteBuffer}
	return nil
}

// reader reads one datagram per ReadBatch.
type reader struct{}

func (reader) read(s *Socket, ms []Message) (int, error) {
	m := &ms[0]
	if len(m.Gather) > 0 {
		return 0, fmt.Errorf("%w: scatter reads need Linux", errors.ErrUnsupported)
	}
	n, addr, err := s.conn.ReadFromUDPAddrPort(m.Buf)
	if err != nil {
		return 0, err
	}
	// A dual-stack socket gives IPv4 sources v4-mapped; they come back
	// plain, as on Linux.
	*m = Message{Buf: m.Buf, N: n, Addr: netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())}
	return 1, nil
}

func (reader) peek(*Socket, *Message) error {
	return fmt.Errorf("udpio: peek: %w", errors.ErrUnsupported)
}

// errReader has no error queue to read: the net package does not ask for
// ICMP errors.
type errReader struct{}

func (errReader) drain(_ *Socket, refused []netip.AddrPort) ([]netip.AddrPort, int, error) {
	return refused, 0, nil
}

// writer sends datagram by datagram, cutting trains into segments.
type writer struct{}

func (writer) write(s *Socket, ms []Message) (int, error) {
	for i := range ms {
		m := &ms[i]
		if m.Segment < 0 || (m.Segment > MaxSegmentSize && m.Size() > m.Segment) {
			return i, fmt.Errorf("udpio: message %d: bad segment size %d", i, m.Segment)
		}
		buf := m.Buf
		if len(m.Gather) > 0 {
			if len(m.Gather) > maxGatherOf(m) {
				return i, fmt.Errorf("%w: message %d has %d slices", errBadGather, i, len(m.Gather))
			}
			buf = append([]byte(nil), m.Buf...)
			for _, g := range m.Gather {
				buf = append(buf, g...)
			}
		}
		var err error
		SplitSegments(Message{Buf: buf, N: len(buf), Segment: m.Segment}, func(seg []byte) {
			if err == nil {
				_, err = s.conn.WriteToUDPAddrPort(seg, m.Addr)
			}
		})
		if err != nil {
			return i, err
		}
	}
	return len(ms), nil
}

// bindControl refuses a device: SO_BINDTODEVICE is Linux's.
func bindControl(device string) func(network, address string, c syscall.RawConn) error {
	if device == "" {
		return nil
	}
	return func(string, string, syscall.RawConn) error {
		return fmt.Errorf("binding to device %s: %w", device, errors.ErrUnsupported)
	}
}
