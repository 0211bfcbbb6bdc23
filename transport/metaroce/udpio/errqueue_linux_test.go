package udpio

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// closedPort returns an address on addr's host where no socket listens: a
// port that was just bound and released.
func closedPort(t *testing.T, addr netip.AddrPort) netip.AddrPort {
	t.Helper()
	s, err := Listen(addr, Config{})
	require.NoError(t, err)
	a := s.LocalAddr()
	require.NoError(t, s.Close())
	return a
}

// listenOrSkip is listen, skipping the test when addr's family is missing.
func listenOrSkip(t *testing.T, addr netip.AddrPort) *Socket {
	t.Helper()
	s, err := Listen(addr, Config{})
	if err != nil {
		t.Skipf("cannot listen on %v: %v", addr, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// waitSocketError waits up to 5 s until s has an error pending or queued
// (POLLERR), so that a test knows the ICMP error has come back.
func waitSocketError(t *testing.T, s *Socket) {
	t.Helper()
	var revents int16
	var perr error
	require.NoError(t, s.raw.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLERR}}
		_, perr = unix.Poll(fds, 5000)
		revents = fds[0].Revents
	}))
	require.NoError(t, perr)
	require.NotZero(t, revents&unix.POLLERR, "no ICMP error came back")
}

func loopbacks() []netip.AddrPort {
	return []netip.AddrPort{loopback4, netip.MustParseAddrPort("[::1]:0")}
}

// A datagram to a closed port comes back as ICMP port unreachable: the
// next read fails with ECONNREFUSED, and DrainErrors names the closed
// port, once.
func TestReadReportsPortUnreachable(t *testing.T) {
	for _, addr := range loopbacks() {
		t.Run(addr.Addr().String(), func(t *testing.T) {
			s := listenOrSkip(t, addr)
			require.True(t, s.Caps().ErrQueue)
			dead := closedPort(t, addr)
			_, err := s.WriteBatch([]Message{{Buf: []byte("hello?"), Addr: dead}})
			require.NoError(t, err)

			require.NoError(t, s.SetReadDeadline(time.Now().Add(5*time.Second)))
			_, err = s.ReadBatch(readBuffers(4, 100))
			require.ErrorIs(t, err, syscall.ECONNREFUSED)
			require.True(t, s.ErrorsPending())
			refused, other, err := s.DrainErrors(nil)
			require.NoError(t, err)
			require.Equal(t, []netip.AddrPort{dead}, refused)
			require.Zero(t, other)
			require.False(t, s.ErrorsPending())

			refused, other, err = s.DrainErrors(refused[:0])
			require.NoError(t, err)
			require.Empty(t, refused)
			require.Zero(t, other)
			require.NoError(t, s.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
			_, err = s.ReadBatch(readBuffers(4, 100))
			require.ErrorIs(t, err, os.ErrDeadlineExceeded, "the error was reported twice")
		})
	}
}

// A pending error fails the next WriteBatch, on a datagram that did not
// go (the error is an earlier datagram's); once the error is consumed the
// datagram goes. A batch that meets the error midway goes on past it and
// marks ErrorsPending. Either way the queued error names the closed port.
func TestWriteMeetsPendingError(t *testing.T) {
	s := listen(t, loopback4, Config{})
	rx := listen(t, loopback4, Config{})
	dead := closedPort(t, loopback4)

	_, err := s.WriteBatch([]Message{{Buf: []byte("a"), Addr: dead}})
	require.NoError(t, err)
	waitSocketError(t, s)
	n, err := s.WriteBatch([]Message{{Buf: []byte("b"), Addr: rx.LocalAddr()}})
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	require.Zero(t, n)
	require.True(t, s.ErrorsPending())
	n, err = s.WriteBatch([]Message{{Buf: []byte("b"), Addr: rx.LocalAddr()}})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	refused, _, err := s.DrainErrors(nil)
	require.NoError(t, err)
	require.Equal(t, []netip.AddrPort{dead}, refused)

	// On loopback the ICMP error usually comes back while sendmmsg is
	// still at work, and stops it after the first datagram.
	ms := []Message{{Buf: []byte("c"), Addr: dead}}
	for i := range 8 {
		ms = append(ms, Message{Buf: pattern(i, 100), Addr: rx.LocalAddr()})
	}
	n, err = s.WriteBatch(ms)
	require.NoError(t, err)
	require.Equal(t, len(ms), n)
	t.Logf("errors pending after the batch: %v", s.ErrorsPending())
	got := readDatagrams(t, rx, 1+8)
	require.Equal(t, []byte("b"), got[0].data)
	for i, g := range got[1:] {
		require.Equal(t, pattern(i, 100), g.data)
	}
	waitSocketError(t, s)
	refused, _, err = s.DrainErrors(nil)
	require.NoError(t, err)
	require.Equal(t, []netip.AddrPort{dead}, refused)
}

// DrainErrors reads at most MaxErrorReads errors per call, and does not
// wait for a ReadBatch blocked on the same socket.
func TestDrainErrorsIsBounded(t *testing.T) {
	s := listen(t, loopback4, Config{})
	dead := closedPort(t, loopback4)
	ms := make([]Message, MaxErrorReads+10)
	for i := range ms {
		ms[i] = Message{Buf: []byte{byte(i)}, Addr: dead}
	}
	// One at a time, each after the previous one's error was consumed,
	// so that every datagram goes, and slower than the kernel's global
	// ICMP rate limit (1000/s, bursts of 50 by default), so that every one
	// is answered.
	for i := 0; i < len(ms); {
		n, err := s.WriteBatch(ms[i : i+1])
		if errors.Is(err, syscall.ECONNREFUSED) {
			continue
		}
		require.NoError(t, err)
		i += n
		time.Sleep(2 * time.Millisecond)
	}
	waitSocketError(t, s)

	readErr := make(chan error, 1)
	go func() {
		for {
			_, err := s.ReadBatch(readBuffers(1, 10))
			if !errors.Is(err, syscall.ECONNREFUSED) {
				readErr <- err
				return
			}
		}
	}()
	total := 0
	for range 3 {
		refused, other, err := s.DrainErrors(nil)
		require.NoError(t, err)
		require.Zero(t, other)
		require.LessOrEqual(t, len(refused), MaxErrorReads)
		total += len(refused)
	}
	// The kernel may have dropped errors that found the receive buffer
	// full; these did not.
	require.Equal(t, len(ms), total)
	require.NoError(t, s.Close())
	require.ErrorIs(t, <-readErr, net.ErrClosed)
	_, _, err := s.DrainErrors(nil)
	require.ErrorIs(t, err, net.ErrClosed)
}

// putSockErrCmsg writes an error-queue control message as the kernel does:
// a TOS or TCLASS message first, then IP_RECVERR (IPV6_RECVERR) with the
// error and the address of the node that reported it. It returns the
// length written.
func putSockErrCmsg(b []byte, v6 bool, e sockErr) int {
	off := 0
	put := func(level, typ int32, data []byte) {
		putCmsgHeader(b[off:], level, typ, len(data))
		copy(b[off+cmsgHdrLen:], data)
		off += (cmsgHdrLen + len(data) + cmsgAlign - 1) / cmsgAlign * cmsgAlign
	}
	data := make([]byte, sockErrLen+sockaddrSlot)
	binary.NativeEndian.PutUint32(data[0:4], uint32(e.errno))
	data[4], data[5], data[6] = e.origin, e.typ, e.code
	offender := netip.MustParseAddrPort("127.0.0.1:0")
	if v6 {
		offender = netip.MustParseAddrPort("[::1]:0")
	}
	n, _ := putSockaddr(data[sockErrLen:], offender, v6)
	data = data[:sockErrLen+n]
	if v6 {
		put(unix.IPPROTO_IPV6, unix.IPV6_TCLASS, []byte{2, 0, 0, 0})
		put(unix.IPPROTO_IPV6, unix.IPV6_RECVERR, data)
	} else {
		put(unix.IPPROTO_IP, unix.IP_TOS, []byte{2})
		put(unix.IPPROTO_IP, unix.IP_RECVERR, data)
	}
	return off
}

var (
	icmpPortUnreachable  = sockErr{errno: unix.ECONNREFUSED, origin: unix.SO_EE_ORIGIN_ICMP, typ: 3, code: 3}
	icmp6PortUnreachable = sockErr{errno: unix.ECONNREFUSED, origin: unix.SO_EE_ORIGIN_ICMP6, typ: 1, code: 4}
	icmpHostUnreachable  = sockErr{errno: unix.EHOSTUNREACH, origin: unix.SO_EE_ORIGIN_ICMP, typ: 3, code: 1}
	localMsgSize         = sockErr{errno: unix.EMSGSIZE, origin: unix.SO_EE_ORIGIN_LOCAL}
)

func sockErrSeed(v6 bool, e sockErr) []byte {
	b := make([]byte, errControlLen)
	return b[:putSockErrCmsg(b, v6, e)]
}

func TestParseSockErr(t *testing.T) {
	tests := []struct {
		name        string
		oob         []byte
		ok, refused bool
	}{
		{"nothing", nil, false, false},
		{"ICMP port unreachable", sockErrSeed(false, icmpPortUnreachable), true, true},
		{"ICMPv6 port unreachable", sockErrSeed(true, icmp6PortUnreachable), true, true},
		{"ICMP host unreachable", sockErrSeed(false, icmpHostUnreachable), true, false},
		{"local error", sockErrSeed(false, localMsgSize), true, false},
		{"TOS only", sockErrSeed(false, icmpPortUnreachable)[:cmsgHdrLen+8], false, false},
		{"error cut short", sockErrSeed(false, icmpPortUnreachable)[:cmsgHdrLen+8+cmsgHdrLen+sockErrLen-1], false, false},
		{"ordinary control data", controlSeed(1400, 3, false), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := parseSockErr(tt.oob)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.refused, e.portUnreachable())
		})
	}
}

// FuzzParseSockErr feeds random control data to the error-queue parser:
// no panic, and an error it reads comes back the same once written as the
// kernel writes it.
func FuzzParseSockErr(f *testing.F) {
	for _, e := range []sockErr{icmpPortUnreachable, icmpHostUnreachable, localMsgSize} {
		f.Add(sockErrSeed(false, e))
	}
	f.Add(sockErrSeed(true, icmp6PortUnreachable))
	f.Add(controlSeed(1400, 3, false))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, oob []byte) {
		e, ok := parseSockErr(oob)
		if !ok {
			return
		}
		for _, v6 := range []bool{false, true} {
			back, ok := parseSockErr(sockErrSeed(v6, e))
			if !ok || back != e {
				t.Fatalf("%+v came back as %+v (%v)", e, back, ok)
			}
		}
	})
}
