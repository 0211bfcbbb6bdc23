package metaroce

import (
	"math/rand/v2"
	"testing"

	"github.com/gocoll/gocoll/transport/metaroce/wire"
	"github.com/stretchr/testify/require"
)

// TestRecvPathNeverAcksWhatDidNotArrive feeds a receiving path seeded
// random arrivals (in order, lost, reordered, duplicated, and jumps of up
// to twice wire.MaxSACKSpan) and checks after each that its ACK block
// reports a sequence number only if it arrived or lies wire.MaxSACKSpan
// or more below the highest arrival (given up, as the sender has resolved
// it), that every arrival is known as seen, and that the bitmap covers
// every arrival among the newest 256 sequence numbers.
func TestRecvPathNeverAcksWhatDidNotArrive(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var r recvPath
		got := map[uint64]bool{}
		next, highest := uint64(0), uint64(0)
		for step := range 4000 {
			var seq uint64
			switch k := rng.IntN(100); {
			case k < 80:
				seq = next
				next++
			case k < 88: // lost: skipped
				next += 1 + uint64(rng.IntN(5))
				continue
			case k < 95 && next > 0: // late or duplicate
				seq = next - 1 - uint64(rng.IntN(int(min(next, 600))))
			case k < 97:
				next += uint64(rng.IntN(2 * wire.MaxSACKSpan))
				continue
			default:
				seq = next
				next++
			}
			isNew := r.receive(seq, 0, 0, false)
			if isNew {
				require.False(t, got[seq], "seed %d step %d: %d reported new twice", seed, step, seq)
			}
			got[seq] = true
			highest = max(highest, seq)
			var blk wire.AckBlock
			r.block(0, 0, &blk)
			lo := uint64(0)
			if highest > 3*wire.MaxSACKSpan {
				lo = highest - 3*wire.MaxSACKSpan
			}
			check := func(q uint64) {
				if blk.Has(q) && !got[q] {
					require.GreaterOrEqual(t, highest, q+wire.MaxSACKSpan, "seed %d step %d: %d acknowledged, never arrived (cum %d skip %d)", seed, step, q, blk.Cum, blk.Skip)
				}
			}
			for q := blk.Start(); q < blk.Start()+wire.BitmapBits; q++ {
				check(q) // the bitmap
			}
			for range 64 {
				check(lo + rng.Uint64N(highest+300-lo)) // and anywhere else
			}
			if seq+wire.BitmapBits > highest { // among the newest 256 (an older late one the sender counts lost)
				require.True(t, blk.Has(seq), "seed %d step %d: the arrival %d is not reported", seed, step, seq)
			}
			require.True(t, r.seen(seq))
			require.LessOrEqual(t, len(r.bits), recvMaxWords)
		}
	}
}

// TestRecvPathDueForAckRepeats: a path is reported in an ACK (due) once it
// received: by the next ACK after an arrival in order, by the next
// ackRepeats ACKs while it has a hole, and again after a duplicate.
func TestRecvPathDueForAckRepeats(t *testing.T) {
	var r recvPath
	var blk wire.AckBlock
	require.False(t, r.due(), "nothing received")
	r.receive(0, 0, 0, false)
	require.True(t, r.due(), "an arrival in order")
	r.block(0, 0, &blk)
	require.False(t, r.due(), "in order, reported by one ACK")
	r.receive(2, 0, 0, false) // 1 missing
	for i := range ackRepeats {
		require.True(t, r.due(), "ACK %d after an arrival above a hole", i)
		r.block(0, 0, &blk)
	}
	require.False(t, r.due(), "reported by %d ACKs already", ackRepeats)
	require.False(t, r.receive(0, 0, 0, false))
	require.True(t, r.due(), "a duplicate arrived")
	r.block(0, 0, &blk)
	require.Equal(t, uint64(1), blk.Cum)
	require.True(t, blk.Has(2))
}
