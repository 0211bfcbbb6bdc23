package wire

import (
	"encoding/binary"
	"time"
)

// BitmapBits is the width of a path's SACK bitmap.
const BitmapBits = 256

// MaxSACKSpan bounds a path's sequence numbers in flight: a sender keeps
// every sequence number it has not resolved (acknowledged or declared
// lost) within MaxSACKSpan of the next one it sends, and a receiver gives
// up on a hole only once it lies MaxSACKSpan or more below the highest
// sequence number received, when the sender has resolved it. Between
// those, an AckBlock's bitmap reports the 256 sequence numbers above Cum
// or, when the highest received lies further up, the 256 below and at it
// (Skip); a sender resolves a packet when any ACK reports it, and the
// ACKs that report a packet are the many sent while it is among the
// newest 256 arrivals. 16384 packets of 1452 bytes are 23 MB, of 9000
// bytes 147 MB: a path's bandwidth-delay product at 1 Gbit/s and 190 ms,
// or 10 Gbit/s and 19 ms, at the smaller size.
const MaxSACKSpan = 1 << 14

// AckBlockLen is the encoded size of one AckBlock.
const AckBlockLen = 1 + 8 + 4 + BitmapBits/8 + 8 + 4 + 4

// ackFixedLen is the size of an ACK body before its blocks and grants.
const ackFixedLen = 4*8 + 2 + 2

// AckBlock reports what the receiver holds of one path's sequence space.
type AckBlock struct {
	Path uint8
	// Cum is cumulative: every sequence number below it was received, or
	// lies MaxSACKSpan or more below the highest one received and was
	// given up on (the sender has resolved those; see MaxSACKSpan).
	Cum uint64
	// Skip is how far above Cum+1 the bitmap starts (at most MaxSACKSpan
	// from a conforming receiver);
	// the block says nothing about Cum+1 to Cum+Skip.
	Skip uint32
	// Bitmap has bit i (word i/64, bit i%64) set if Cum+1+Skip+i was
	// received.
	Bitmap [BitmapBits / 64]uint64
	// Echo is the SentAt of the packet that most recently arrived on the
	// path, and Delay how long the receiver held it before this ACK,
	// counted from its arrival (with kernel receive timestamps, its arrival
	// in the receiver's socket, so its scheduling delay is in Delay); the
	// sender's RTT sample is the ACK's arrival - Echo - Delay.
	Echo  time.Duration
	Delay time.Duration
	// CE counts the ECN-CE marked packets received on the path, modulo 2^32.
	CE uint32
}

// Has reports whether the block says seq was received (or given up on, for
// seq below Cum). False means not received or not reported.
func (a *AckBlock) Has(seq uint64) bool {
	if seq < a.Cum {
		return true
	}
	start := a.Start()
	if seq < start || seq-start >= BitmapBits {
		return false
	}
	i := seq - start
	return a.Bitmap[i/64]&(1<<(i%64)) != 0
}

// Start is the sequence number of the bitmap's bit 0: Cum+1+Skip.
func (a *AckBlock) Start() uint64 { return a.Cum + 1 + uint64(a.Skip) }

// Ack is an ACK packet. Its blocks and grants stay encoded in the packet
// and are read with Block and Grant, so parsing does not allocate.
type Ack struct {
	Conn   uint64
	Path   uint8  // the path the ACK travels on
	Rate   uint64 // the receiver's target rate for this sender in bytes/s; 0 means no limit
	Credit uint64 // the sender may have sent at most this many unconfirmed bytes in total
	// FinBase is the receiver's lowest message sequence number not yet
	// finished; the sender starts no message at or beyond FinBase plus the
	// receiver's message window.
	FinBase uint64
	// SentAt is when the ACK was sent, on the receiver's clock: with a
	// block's Echo and Delay it gives the one-way delay of the block's
	// path, SentAt - Delay - Echo, plus the clocks' offset, which the
	// sender compares only with the same path's earlier values, so that
	// queueing on the way out is seen whichever path the ACK came back on.
	SentAt time.Duration
	blocks []byte
	grants []byte
}

// NumBlocks returns the number of path blocks.
func (a *Ack) NumBlocks() int { return len(a.blocks) / AckBlockLen }

// Block decodes path block i into blk; i must be below NumBlocks.
func (a *Ack) Block(i int, blk *AckBlock) {
	r := reader{b: a.blocks[i*AckBlockLen : (i+1)*AckBlockLen]}
	blk.Path = r.u8()
	blk.Cum = r.u64()
	blk.Skip = r.u32()
	for w := range blk.Bitmap {
		blk.Bitmap[w] = r.u64()
	}
	blk.Echo = time.Duration(r.u64())
	blk.Delay = time.Duration(r.u32())
	blk.CE = r.u32()
}

// NumGrants returns the number of grants.
func (a *Ack) NumGrants() int { return len(a.grants) / 8 }

// Grant returns grant i, the MsgSeq of a message the receiver has matched
// to a posted buffer, so the sender may send all of it without credit.
func (a *Ack) Grant(i int) uint64 { return binary.BigEndian.Uint64(a.grants[i*8:]) }

// MaxAckDelay is the largest Delay an AckBlock can carry.
const MaxAckDelay = time.Duration(1<<32 - 1)

// AckLen returns the size of an ACK packet with the given numbers of blocks
// and grants.
func AckLen(blocks, grants int) int {
	return HeaderLen + ackFixedLen + blocks*AckBlockLen + grants*8 + CRCLen
}

// AppendAck appends an ACK packet to b. At most 65535 blocks and grants each
// are encoded; the caller sizes them to its datagram with AckLen.
func AppendAck(b []byte, a *Ack, blocks []AckBlock, grants []uint64) []byte {
	blocks = blocks[:min(len(blocks), 65535)]
	grants = grants[:min(len(grants), 65535)]
	start := len(b)
	b = appendHeader(b, Header{Type: TypeAck, Path: a.Path, Conn: a.Conn})
	b = binary.BigEndian.AppendUint64(b, a.Rate)
	b = binary.BigEndian.AppendUint64(b, a.Credit)
	b = binary.BigEndian.AppendUint64(b, a.FinBase)
	b = binary.BigEndian.AppendUint64(b, uint64(a.SentAt))
	b = binary.BigEndian.AppendUint16(b, uint16(len(blocks)))
	b = binary.BigEndian.AppendUint16(b, uint16(len(grants)))
	for i := range blocks {
		blk := &blocks[i]
		b = append(b, blk.Path)
		b = binary.BigEndian.AppendUint64(b, blk.Cum)
		b = binary.BigEndian.AppendUint32(b, blk.Skip)
		for _, w := range blk.Bitmap {
			b = binary.BigEndian.AppendUint64(b, w)
		}
		b = binary.BigEndian.AppendUint64(b, uint64(blk.Echo))
		b = binary.BigEndian.AppendUint32(b, uint32(min(max(blk.Delay, 0), MaxAckDelay)))
		b = binary.BigEndian.AppendUint32(b, blk.CE)
	}
	for _, g := range grants {
		b = binary.BigEndian.AppendUint64(b, g)
	}
	return appendCRC(b, start)
}

// ParseAck parses an ACK packet into a without allocating; a keeps
// references into b. Flags must be zero and the counts must match the size.
func ParseAck(b []byte, a *Ack) error {
	h, body, err := Open(b)
	if err != nil {
		return err
	}
	return DecodeAck(h, body, a)
}

// DecodeAck decodes an ACK packet that Open accepted, from Open's header and
// body, with ParseAck's checks after Open's; a keeps references into body.
func DecodeAck(h Header, body []byte, a *Ack) error {
	if h.Type != TypeAck {
		return ErrType
	}
	if h.Flags != 0 {
		return ErrMalformed
	}
	r := reader{b: body}
	*a = Ack{Conn: h.Conn, Path: h.Path}
	a.Rate, a.Credit, a.FinBase, a.SentAt = r.u64(), r.u64(), r.u64(), time.Duration(r.u64())
	nb, ng := int(r.u16()), int(r.u16())
	a.blocks = r.take(nb * AckBlockLen)
	a.grants = r.take(ng * 8)
	return r.done()
}
