package metaroce

import (
	"time"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
)

// recvWords is the width of a receiving path's bitmap in 64-bit words: the
// sequence numbers from cum to cum+319, of which the ACK reports cum+1 to
// cum+256.
const recvWords = wire.BitmapBits/64 + 1

// recvPath is the receiver's record of one path's sequence space.
type recvPath struct {
	// cum is the lowest sequence number neither received nor given up on;
	// bit i of bits stands for cum+i (bit 0 is always clear).
	cum  uint64
	bits [recvWords]uint64
	// echo is the SentAt of the packet that arrived last, at echoAt.
	echo, echoAt time.Duration
	ce           uint32 // CE-marked packets received, mod 2^32
	unacked      int    // packets received since the last ACK
	gap          bool   // a packet arrived out of order since the last ACK
	received     int64
	dups         int64
}

// receive records seq and reports whether it is new. A sequence number more
// than the window ahead slides the window, giving up on the oldest holes;
// the sender has resolved those already (its window is smaller).
func (r *recvPath) receive(seq uint64, sentAt, now time.Duration, ce bool) bool {
	if ce {
		r.ce++
	}
	if r.seen(seq) {
		r.dups++
		return false
	}
	if d := seq - r.cum; d > wire.BitmapBits {
		r.shift(d - wire.BitmapBits)
	}
	i := seq - r.cum
	if i != 0 {
		r.gap = true
	}
	r.bits[i/64] |= 1 << (i % 64)
	for r.bits[0]&1 != 0 {
		r.shift(1)
	}
	r.echo, r.echoAt = sentAt, now
	r.unacked++
	r.received++
	return true
}

func (r *recvPath) has(i uint64) bool { return r.bits[i/64]&(1<<(i%64)) != 0 }

// seen reports whether seq was received already (or given up on).
func (r *recvPath) seen(seq uint64) bool {
	return seq < r.cum || (seq-r.cum < recvWords*64 && r.has(seq-r.cum))
}

// shift moves the window k sequence numbers forward.
func (r *recvPath) shift(k uint64) {
	r.cum += k
	if k >= recvWords*64 {
		r.bits = [recvWords]uint64{}
		return
	}
	words, bits := int(k/64), k%64
	for i := range r.bits {
		var v uint64
		if j := i + words; j < recvWords {
			v = r.bits[j] >> bits
			if bits != 0 && j+1 < recvWords {
				v |= r.bits[j+1] << (64 - bits)
			}
		}
		r.bits[i] = v
	}
}

// block fills the ACK block for this path at time now.
func (r *recvPath) block(path uint8, now time.Duration, blk *wire.AckBlock) {
	blk.Path, blk.Cum, blk.CE = path, r.cum, r.ce
	for w := range blk.Bitmap {
		// Report cum+1.. : drop bit 0 and take the next 256 bits.
		blk.Bitmap[w] = r.bits[w]>>1 | r.bits[w+1]<<63
	}
	blk.Echo, blk.Delay = r.echo, now-r.echoAt
	r.unacked, r.gap = 0, false
}
