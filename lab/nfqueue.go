//go:build linux

package lab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// The NFQUEUE netlink protocol (linux/netfilter/nfnetlink_queue.h), as
// much of it as the delay daemon uses.
const (
	nfnlSubsysQueue = 3
	nfqnlMsgPacket  = 0
	nfqnlMsgVerdict = 1
	nfqnlMsgConfig  = 2

	nfqaPacketHdr  = 1
	nfqaVerdictHdr = 2
	nfqaTimestamp  = 4
	nfqaPayload    = 10

	nfqaCfgCmd      = 1
	nfqaCfgParams   = 2
	nfqaCfgQueueMax = 3
	nfqaCfgMask     = 4
	nfqaCfgFlags    = 5

	nfqnlCfgCmdBind = 1
	nfqnlCopyMeta   = 1
	nfqnlCopyPacket = 2
	// traceCopyRange is how much of each packet a tracing daemon copies:
	// the IPv4 header's fixed part and the UDP header.
	traceCopyRange = 28
	nfqaCfgFGSO    = 1 << 2

	nfDrop   = 0
	nfAccept = 1

	nlmsgHdrLen  = 16
	nfgenHdrLen  = 4
	nlaHdrLen    = 4
	nlaTypeMask  = 0x3fff
	verdictBytes = nlmsgHdrLen + nfgenHdrLen + nlaHdrLen + 8
)

// nfqMsgType is the netlink message type of an NFQUEUE message.
func nfqMsgType(msg uint16) uint16 { return nfnlSubsysQueue<<8 | msg }

// appendNfqMsg appends one NFQUEUE netlink message for queue with the
// given attributes (type, value) to b.
func appendNfqMsg(b []byte, msg, flags uint16, seq uint32, queue uint16, attrs ...nlAttr) []byte {
	size := nlmsgHdrLen + nfgenHdrLen
	for _, a := range attrs {
		size += nlaAlign(nlaHdrLen + len(a.val))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(size))
	b = binary.LittleEndian.AppendUint16(b, nfqMsgType(msg))
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = binary.LittleEndian.AppendUint32(b, seq)
	b = binary.LittleEndian.AppendUint32(b, 0) // port id: the kernel's
	b = append(b, unix.AF_UNSPEC, 0)           // nfgenmsg: family, version
	b = binary.BigEndian.AppendUint16(b, queue)
	for _, a := range attrs {
		b = binary.LittleEndian.AppendUint16(b, uint16(nlaHdrLen+len(a.val)))
		b = binary.LittleEndian.AppendUint16(b, a.typ)
		b = append(b, a.val...)
		for pad := nlaAlign(len(a.val)) - len(a.val); pad > 0; pad-- {
			b = append(b, 0)
		}
	}
	return b
}

type nlAttr struct {
	typ uint16
	val []byte
}

func nlaAlign(n int) int { return (n + 3) &^ 3 }

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// configMsgs are the requests that bind queue to this socket: bind, copy
// packet metadata only (with trace, the packet's first traceCopyRange
// bytes), queue up to maxLen packets, keep GSO packets whole.
func configMsgs(queue uint16, maxLen uint32, seq uint32, trace bool) [][]byte {
	flags := uint16(unix.NLM_F_REQUEST | unix.NLM_F_ACK)
	cfg := func(attrs ...nlAttr) []byte {
		seq++
		return appendNfqMsg(nil, nfqnlMsgConfig, flags, seq, queue, attrs...)
	}
	params := append(be32(0), nfqnlCopyMeta)
	if trace {
		params = append(be32(traceCopyRange), nfqnlCopyPacket)
	}
	return [][]byte{
		cfg(nlAttr{nfqaCfgCmd, []byte{nfqnlCfgCmdBind, 0, 0, 0}}), // cmd u8, pad, pf be16 (unused)
		cfg(nlAttr{nfqaCfgParams, params}),
		cfg(nlAttr{nfqaCfgQueueMax, be32(maxLen)}),
		cfg(nlAttr{nfqaCfgFlags, be32(nfqaCfgFGSO)}, nlAttr{nfqaCfgMask, be32(nfqaCfgFGSO)}),
	}
}

// appendVerdict appends the verdict on packet id of queue to b.
func appendVerdict(b []byte, queue uint16, id, verdict uint32) []byte {
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:], verdict)
	binary.BigEndian.PutUint32(hdr[4:], id)
	return appendNfqMsg(b, nfqnlMsgVerdict, unix.NLM_F_REQUEST, 0, queue, nlAttr{nfqaVerdictHdr, hdr[:]})
}

// nlMsg is one netlink message of a received buffer.
type nlMsg struct {
	typ  uint16
	seq  uint32
	data []byte // after the header
}

var errNlTrunc = errors.New("truncated netlink message")

// parseNlMsgs splits a received buffer into its netlink messages. It
// returns the messages before the first malformed one and an error.
func parseNlMsgs(b []byte) ([]nlMsg, error) { return appendNlMsgs(nil, b) }

// appendNlMsgs is parseNlMsgs appending to out.
func appendNlMsgs(out []nlMsg, b []byte) ([]nlMsg, error) {
	for len(b) > 0 {
		m, rest, err := nextNlMsg(b)
		if err != nil {
			return out, err
		}
		out = append(out, m)
		b = rest
	}
	return out, nil
}

// nextNlMsg returns the first netlink message of b and what follows it
// (aligned), or errNlTrunc when b does not start with a whole message.
func nextNlMsg(b []byte) (m nlMsg, rest []byte, err error) {
	if len(b) < nlmsgHdrLen {
		return nlMsg{}, nil, errNlTrunc
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n < nlmsgHdrLen || n > len(b) {
		return nlMsg{}, nil, errNlTrunc
	}
	m = nlMsg{typ: binary.LittleEndian.Uint16(b[4:]), seq: binary.LittleEndian.Uint32(b[8:]), data: b[nlmsgHdrLen:n]}
	return m, b[min(nlaAlign(n), len(b)):], nil
}

// nlError returns the error of an NLMSG_ERROR message (nil for an ACK).
func nlError(m nlMsg) error {
	if len(m.data) < 4 {
		return errNlTrunc
	}
	if e := int32(binary.LittleEndian.Uint32(m.data)); e != 0 {
		return unix.Errno(-e)
	}
	return nil
}

// nfqPacket is what the daemon reads of an NFQUEUE packet message.
type nfqPacket struct {
	queue   uint16
	id      uint32
	payload []byte // the packet's first bytes; nil in metadata mode
	// stamp is the kernel's timestamp of the packet (NFQA_TIMESTAMP, its
	// receive time, to the microsecond), zero when the message has none.
	stamp time.Time
}

// parsePacket reads an NFQUEUE packet message.
func parsePacket(m nlMsg) (nfqPacket, error) {
	var p nfqPacket
	if m.typ != nfqMsgType(nfqnlMsgPacket) {
		return p, fmt.Errorf("not a packet message: type %#x", m.typ)
	}
	if len(m.data) < nfgenHdrLen {
		return p, errNlTrunc
	}
	found := false
	p.queue = binary.BigEndian.Uint16(m.data[2:])
	attrs := m.data[nfgenHdrLen:]
	for len(attrs) >= nlaHdrLen {
		n := int(binary.LittleEndian.Uint16(attrs))
		typ := binary.LittleEndian.Uint16(attrs[2:]) & nlaTypeMask
		if n < nlaHdrLen || n > len(attrs) {
			break
		}
		switch {
		case typ == nfqaPacketHdr && n >= nlaHdrLen+4:
			p.id, found = binary.BigEndian.Uint32(attrs[nlaHdrLen:]), true
		case typ == nfqaTimestamp && n >= nlaHdrLen+16:
			sec, usec := binary.BigEndian.Uint64(attrs[nlaHdrLen:]), binary.BigEndian.Uint64(attrs[nlaHdrLen+8:])
			if sec < 1<<40 && usec < 1e6 {
				p.stamp = time.Unix(int64(sec), int64(usec)*1e3)
			}
		case typ == nfqaPayload:
			p.payload = attrs[nlaHdrLen:n]
		}
		if nlaAlign(n) >= len(attrs) {
			break
		}
		attrs = attrs[nlaAlign(n):]
	}
	if !found {
		return nfqPacket{}, errors.New("packet message without a packet header")
	}
	return p, nil
}
