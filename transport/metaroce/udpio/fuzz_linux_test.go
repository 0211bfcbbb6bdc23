package udpio

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

// controlSeed builds control data as the kernel writes it.
func controlSeed(gso int, tos byte, v6 bool) []byte {
	b := make([]byte, readControlLen)
	off := 0
	put := func(level, typ int32, data []byte) {
		putCmsgHeader(b[off:], level, typ, len(data))
		copy(b[off+cmsgHdrLen:], data)
		off += (cmsgHdrLen + len(data) + cmsgAlign - 1) / cmsgAlign * cmsgAlign
	}
	if gso > 0 {
		put(unix.SOL_UDP, unix.UDP_GRO, []byte{byte(gso), byte(gso >> 8), 0, 0})
	}
	if v6 {
		put(unix.IPPROTO_IPV6, unix.IPV6_TCLASS, []byte{tos, 0, 0, 0})
	} else {
		put(unix.IPPROTO_IP, unix.IP_TOS, []byte{tos})
	}
	return b[:off]
}

// stampSeed builds an SCM_TIMESTAMPNS control message as the kernel
// writes it on this platform (a 16-byte timespec on a 64-bit system, an
// 8-byte one on a 32-bit system).
func stampSeed(sec, nsec int64) []byte {
	b := make([]byte, cmsgHdrLen+timespecLen)
	putCmsgHeader(b, unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespecLen)
	if timespecLen == 16 {
		binary.NativeEndian.PutUint64(b[cmsgHdrLen:], uint64(sec))
		binary.NativeEndian.PutUint64(b[cmsgHdrLen+8:], uint64(nsec))
	} else {
		binary.NativeEndian.PutUint32(b[cmsgHdrLen:], uint32(sec))
		binary.NativeEndian.PutUint32(b[cmsgHdrLen+4:], uint32(nsec))
	}
	return b
}

// cutStamp is stampSeed(sec, nsec) as the kernel writes it into a control
// buffer with room for only keep bytes of its data (MSG_CTRUNC): the
// header's cmsg_len says the cut length.
func cutStamp(sec, nsec int64, keep int) []byte {
	b := stampSeed(sec, nsec)[:cmsgHdrLen+keep]
	putCmsgHeader(b, unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, keep)
	return b
}

// longStamp is stampSeed(sec, nsec) with 8 more bytes of data, which no
// platform's timespec has.
func longStamp(sec, nsec int64) []byte {
	b := append(stampSeed(sec, nsec), make([]byte, 8)...)
	putCmsgHeader(b, unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, timespecLen+8)
	return b
}

func TestParseControl(t *testing.T) {
	tests := []struct {
		name string
		oob  []byte
		want control
	}{
		{"nothing", nil, control{}},
		{"GRO and TOS", controlSeed(1400, 3, false), control{gso: 1400, tos: 3}},
		{"TCLASS only", controlSeed(0, 2, true), control{tos: 2}},
		{"cut header", controlSeed(1400, 3, false)[:cmsgHdrLen-1], control{}},
		{"cut second message", controlSeed(1400, 3, false)[:cmsgHdrLen+4], control{gso: 1400}},
		{"GRO, TOS and time", append(controlSeed(9000, 2, false), stampSeed(1_764_921_600, 5)...),
			control{gso: 9000, tos: 2, stamp: 1_764_921_600_000_000_005}},
		{"time only", stampSeed(7, 999_999_999), control{stamp: 7_999_999_999}},
		{"nanoseconds out of range", stampSeed(7, 1e9), control{}},
		{"negative time", stampSeed(-1, 0), control{}},
		{"cut time", stampSeed(7, 0)[:cmsgHdrLen+4], control{}},
		// Review C15 F2: the kernel's cut form, cmsg_len = header + 8 of a
		// 16-byte timespec, read as a 32-bit one gave a plausible time.
		{"time cut by the kernel", cutStamp(1_764_921_600, 0, timespecLen/2), control{}},
		{"time longer than a timespec", longStamp(1_764_921_600, 0), control{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseControl(tt.oob); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if b := make([]byte, segmentCmsgLen); putSegmentCmsg(b, 1452) != unix.CmsgSpace(2) {
		t.Fatal("UDP_SEGMENT cmsg space differs from CMSG_SPACE(2)")
	}
}

// FuzzParseControl feeds random control data: no panic, no hang, and a
// segment size never negative.
func FuzzParseControl(f *testing.F) {
	f.Add(controlSeed(1400, 3, false))
	f.Add(controlSeed(9000, 2, true))
	f.Add(controlSeed(0, 0, false))
	f.Add([]byte{})
	f.Add(stampSeed(1_764_921_600, 999_999_999))
	f.Add(append(controlSeed(9000, 2, false), stampSeed(1, 0)...))
	f.Fuzz(func(t *testing.T, oob []byte) {
		c := parseControl(oob)
		if c.gso < 0 {
			t.Fatalf("negative segment size %d", c.gso)
		}
		if c.stamp < 0 {
			t.Fatalf("negative timestamp %d", c.stamp)
		}
	})
}

// FuzzSockaddr parses random socket addresses (no panic) and checks that
// every address written comes back.
func FuzzSockaddr(f *testing.F) {
	b := make([]byte, sockaddrSlot)
	for _, s := range []string{"127.0.0.1:9", "[::1]:443", "[fe80::1%2]:7"} {
		n, _ := putSockaddr(b, netip.MustParseAddrPort(s), true)
		f.Add(append([]byte(nil), b[:n]...))
	}
	n, _ := putSockaddr(b, netip.MustParseAddrPort("10.1.2.3:65535"), false)
	f.Add(append([]byte(nil), b[:n]...))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ap, err := parseSockaddr(raw)
		if err != nil {
			return
		}
		for _, v6 := range []bool{true, false} {
			out := make([]byte, sockaddrSlot)
			n, err := putSockaddr(out, ap, v6)
			if err != nil {
				continue
			}
			back, err := parseSockaddr(out[:n])
			if err != nil || back != ap {
				t.Fatalf("%v came back as %v (%v)", ap, back, err)
			}
		}
	})
}
