package udpio

import (
	"encoding/binary"
	"math"
	"math/bits"
	"time"

	"golang.org/x/sys/unix"
)

// Control messages (cmsg) in Linux's layout: a header of cmsg_len (a size_t
// in host byte order), cmsg_level and cmsg_type (int32 each), then the data;
// each message starts at a multiple of sizeof(long), which on Linux is the
// size of cmsg_len.
const (
	cmsgHdrLen = unix.SizeofCmsghdr
	cmsgAlign  = cmsgHdrLen - 8
	// segmentCmsgLen is the space of one UDP_SEGMENT control message.
	segmentCmsgLen = (cmsgHdrLen + 2 + cmsgAlign - 1) / cmsgAlign * cmsgAlign
	// intCmsgLen is the space of one control message holding a C int
	// (IP_TOS, IPV6_TCLASS).
	intCmsgLen = (cmsgHdrLen + 4 + cmsgAlign - 1) / cmsgAlign * cmsgAlign
	// writeControlLen is the control buffer kept per sent message: a
	// UDP_SEGMENT and a traffic class.
	writeControlLen = segmentCmsgLen + intCmsgLen
	// readControlLen is the control buffer kept per received message: room
	// for UDP_GRO (an int), IP_TOS (a byte) and IPV6_TCLASS (an int), each
	// padded, with some to spare, and SCM_TIMESTAMPNS (a timespec).
	readControlLen = 4*(cmsgHdrLen+8) + cmsgHdrLen + 16
	// ecnCE is the ECN codepoint Congestion Experienced (both ECN bits).
	ecnCE = 3
	// ecnECT0 is the ECN codepoint ECT(0).
	ecnECT0 = 2
)

// control is what a received message's control data told.
type control struct {
	gso   int   // UDP_GRO segment size, 0 if none
	tos   byte  // IP_TOS or IPV6_TCLASS, 0 if none
	stamp int64 // SCM_TIMESTAMPNS in ns since the Unix epoch, 0 if none
}

// class returns the DSCP of the received traffic class.
func (c control) class() uint8 { return c.tos >> 2 }

// ce reports whether the ECN bits say Congestion Experienced.
func (c control) ce() bool { return c.tos&3 == ecnCE }

// cmsgs walks the control messages of a buffer the kernel filled. It
// ends at the first malformed header: what comes before it is still read.
type cmsgs struct{ rest []byte }

// next returns the next control message's level, type and data, or false
// at the end of the buffer or at a malformed header.
func (w *cmsgs) next() (level, typ int32, data []byte, ok bool) {
	oob := w.rest
	if len(oob) < cmsgHdrLen {
		return 0, 0, nil, false
	}
	n := cmsgLen(oob)
	if n < cmsgHdrLen || n > uint64(len(oob)) {
		w.rest = nil
		return 0, 0, nil, false
	}
	level = int32(binary.NativeEndian.Uint32(oob[cmsgAlign:]))
	typ = int32(binary.NativeEndian.Uint32(oob[cmsgAlign+4:]))
	data = oob[cmsgHdrLen:n]
	w.rest = nil
	if next := (n + cmsgAlign - 1) / cmsgAlign * cmsgAlign; next < uint64(len(oob)) {
		w.rest = oob[next:]
	}
	return level, typ, data, true
}

// parseControl reads the control messages in oob that this package asks
// for, skipping any others. It stops at the first malformed header and
// returns what it found until then; it never fails.
func parseControl(oob []byte) control {
	var c control
	w := cmsgs{oob}
	for {
		level, typ, data, ok := w.next()
		if !ok {
			return c
		}
		c.take(level, typ, data)
	}
}

// take records the data of one control message if it is one we read.
func (c *control) take(level, typ int32, data []byte) {
	switch {
	case level == unix.SOL_UDP && typ == unix.UDP_GRO:
		c.gso = int(nativeInt(data))
	case level == unix.IPPROTO_IP && typ == unix.IP_TOS && len(data) >= 1:
		c.tos = data[0]
	case level == unix.IPPROTO_IPV6 && typ == unix.IPV6_TCLASS:
		c.tos = byte(nativeInt(data))
	case level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPNS:
		c.stamp = timespecNanos(data)
	}
}

// timespecNanos reads a struct timespec in host byte order as nanoseconds
// since the epoch. Its layout is the platform's (two 64-bit fields, or two
// 32-bit ones on a 32-bit system: SO_TIMESTAMPNS is the old timespec
// there), and data of any other length is no time: a 64-bit timespec the
// kernel cut short (MSG_CTRUNC, cmsg_len shortened to the room left) must
// not read as a 32-bit one. 0 also if the time is not positive, out of
// range or has a nanosecond field outside [0, 1e9).
func timespecNanos(data []byte) int64 {
	var sec, nsec int64
	switch {
	case len(data) != timespecLen:
		return 0
	case timespecLen == 16:
		sec, nsec = int64(binary.NativeEndian.Uint64(data)), int64(binary.NativeEndian.Uint64(data[8:]))
	default:
		sec, nsec = int64(int32(binary.NativeEndian.Uint32(data))), int64(int32(binary.NativeEndian.Uint32(data[4:])))
	}
	if sec < 0 || sec >= math.MaxInt64/int64(time.Second) || nsec < 0 || nsec >= 1e9 || sec == 0 && nsec == 0 {
		return 0
	}
	return sec*1e9 + nsec
}

// timespecLen is the size of the platform's struct timespec: two C longs.
const timespecLen = 2 * bits.UintSize / 8

// nativeInt reads a C int (or, if only two bytes are there, a u16) in host
// byte order; 0 if data is shorter. Negative values read as 0.
func nativeInt(data []byte) uint32 {
	switch {
	case len(data) >= 4:
		v := binary.NativeEndian.Uint32(data)
		if int32(v) < 0 {
			return 0
		}
		return v
	case len(data) >= 2:
		return uint32(binary.NativeEndian.Uint16(data))
	}
	return 0
}

// cmsgLen reads the cmsg_len field at the start of b (len(b) >=
// cmsgHdrLen).
func cmsgLen(b []byte) uint64 {
	if cmsgAlign == 8 {
		return binary.NativeEndian.Uint64(b)
	}
	return uint64(binary.NativeEndian.Uint32(b))
}

// putCmsgHeader writes a control message header for dataLen bytes of data.
func putCmsgHeader(b []byte, level, typ int32, dataLen int) {
	n := uint64(cmsgHdrLen + dataLen)
	if cmsgAlign == 8 {
		binary.NativeEndian.PutUint64(b, n)
	} else {
		binary.NativeEndian.PutUint32(b, uint32(n))
	}
	binary.NativeEndian.PutUint32(b[cmsgAlign:], uint32(level))
	binary.NativeEndian.PutUint32(b[cmsgAlign+4:], uint32(typ))
}

// putSegmentCmsg writes a UDP_SEGMENT control message for segments of seg
// bytes into b (at least segmentCmsgLen bytes) and returns its length.
func putSegmentCmsg(b []byte, seg uint16) int {
	clear(b[:segmentCmsgLen])
	putCmsgHeader(b, unix.SOL_UDP, unix.UDP_SEGMENT, 2)
	binary.NativeEndian.PutUint16(b[cmsgHdrLen:], seg)
	return segmentCmsgLen
}

// putClassCmsg writes into b (at least intCmsgLen bytes) a control message
// setting the traffic class of one datagram to DSCP class with ECN bits
// ecn, IPV6_TCLASS for an IPv6 destination of an IPv6 socket and IP_TOS
// otherwise (an IPv4 socket, or a v4-mapped destination of a dual-stack
// one, whose IPv4 header takes IP_TOS), and returns its length.
func putClassCmsg(b []byte, class, ecn uint8, v6 bool) int {
	clear(b[:intCmsgLen])
	level, typ := int32(unix.IPPROTO_IP), int32(unix.IP_TOS)
	if v6 {
		level, typ = unix.IPPROTO_IPV6, unix.IPV6_TCLASS
	}
	putCmsgHeader(b, level, typ, 4)
	binary.NativeEndian.PutUint32(b[cmsgHdrLen:], uint32(class&63)<<2|uint32(ecn&3))
	return intCmsgLen
}
