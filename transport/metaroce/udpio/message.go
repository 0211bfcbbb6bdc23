package udpio

import (
	"errors"
	"net/netip"
)

// errBadGather reports a written Message whose Gather is not allowed.
var errBadGather = errors.New("udpio: bad gather")

// Limits of the kernel's UDP segmentation offload and of UDP itself.
const (
	// MaxSegments is the largest number of segments in one GSO train that
	// this package builds ([GatherTrains], and WriteBatch when it cuts a longer
	// train). Older kernels accept at most 64 segments per send, newer ones
	// more; 64 works everywhere.
	MaxSegments = 64
	// MaxPayload is the largest UDP payload over IPv4 (65535 bytes of IP
	// packet less 20 bytes of IP header and 8 of UDP header), and the largest
	// train that [GatherTrains] builds.
	MaxPayload = 65507
	// MaxSegmentSize is the largest segment size a UDP_SEGMENT control
	// message can carry (a 16-bit field).
	MaxSegmentSize = 65535
	// ReadBufferSize is a read buffer length that always holds a whole
	// datagram or GRO train (IPv6 allows a payload of up to 65527 bytes).
	ReadBufferSize = 65536
	// MaxGather is the most slices a written Message may gather after Buf.
	MaxGather = 3
	// MaxTrainGather is the most slices a written train (a Message with a
	// Segment) may gather after Buf: enough for [MaxSegments] datagrams
	// of one slice each, or for a train of MTU-sized datagrams of three
	// slices each (a header, a payload and a tail).
	MaxTrainGather = MaxSegments - 1
)

// Message is one datagram, or with GSO/GRO a train of segments of equal size
// (the last one may be shorter) held back to back in Buf.
type Message struct {
	// Buf holds, on write, the bytes to send (all of len(Buf)); on read, the
	// buffer to fill (its len is the capacity used).
	Buf []byte
	// N is, on read, the number of bytes received into Buf. Ignored on write.
	N int
	// Addr is, on read, the source of the datagram; on write, its
	// destination.
	Addr netip.AddrPort
	// Segment is, on write, the size of each datagram of a train (GSO); on
	// read, the size of each datagram of a train the kernel merged (GRO).
	// 0 means Buf holds one datagram. On write, a Segment of len(Buf) or
	// more also means one datagram.
	Segment int
	// CE is set on read when the datagram (or all datagrams of the train)
	// arrived marked ECN Congestion Experienced.
	CE bool
	// Class is, on write, the DSCP (0 to 63) the datagram leaves with, in
	// the IP header's traffic class beside the socket's ECN bits: 0 leaves
	// the socket's (class 0), any other value adds an IP_TOS or
	// IPV6_TCLASS control message to the same sendmmsg entry (no system
	// call more); higher bits are ignored. A train carries one class: GSO
	// segments share the header. Linux only (ignored elsewhere). On read
	// (Linux, with ECN on), the DSCP the datagram arrived with.
	Class uint8
	// Received is, on read (Linux, with Caps.Timestamps), when the kernel
	// received the datagram (for a GRO train, its first), in nanoseconds
	// since the Unix epoch on CLOCK_REALTIME (SO_TIMESTAMPNS); 0 if the
	// kernel gave no time. The time a datagram waited in the socket for a
	// busy reader is the difference to the time it is read.
	Received int64
	// Truncated is set on read when the datagram or train was longer than
	// Buf and was cut to len(Buf); its tail is lost.
	Truncated bool
	// Gather holds, on write, up to MaxGather more slices sent after Buf
	// in the same datagram, straight from where they are (the kernel
	// gathers them: no copy is made). On a train (Segment set), up to
	// MaxTrainGather slices: the train's bytes are Buf and then the Gather
	// slices, back to back, cut into Segment-sized datagrams wherever the
	// slices end (so a train of datagrams that each lie in pieces is sent
	// without copying them together). On read (Linux only), the datagram
	// fills Buf and then each Gather slice in turn (a scatter read, so that
	// its parts land where they belong), and N counts the bytes in all.
	Gather [][]byte
}

// Segments returns the number of datagrams m stands for on write: 1 for a
// plain datagram (an empty one included), or the number of segments of a
// train.
func (m *Message) Segments() int {
	n := m.Size()
	if m.Segment <= 0 || n <= m.Segment {
		return 1
	}
	return (n + m.Segment - 1) / m.Segment
}

// maxGatherOf returns the most Gather slices m may have on write:
// MaxTrainGather on a train (Segment set), else MaxGather.
func maxGatherOf(m *Message) int {
	if m.Segment > 0 {
		return MaxTrainGather
	}
	return MaxGather
}

// Size returns the bytes m sends: Buf's and its Gather slices'.
func (m *Message) Size() int {
	n := len(m.Buf)
	for _, g := range m.Gather {
		n += len(g)
	}
	return n
}

// SplitSegments calls fn for each datagram of a received message: once with
// Buf[:N] when m is a single datagram (Segment 0), or once per segment of a
// GRO train, in order, the last segment possibly shorter. An N outside
// [0, len(Buf)] is clamped to it. fn must not keep seg after it returns if
// the caller reuses Buf.
func SplitSegments(m Message, fn func(seg []byte)) {
	n := min(max(m.N, 0), len(m.Buf))
	data := m.Buf[:n]
	if m.Segment <= 0 || n <= m.Segment {
		fn(data)
		return
	}
	for len(data) > m.Segment {
		fn(data[:m.Segment:m.Segment])
		data = data[m.Segment:]
	}
	fn(data)
}
