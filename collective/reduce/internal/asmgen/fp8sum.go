package asmgen

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// float8E4M3SumWords emits the AVX-512 FP16 E4M3 sum with each element in
// its own 16-bit word, as E5M2's and the product's are, instead of
// float8E4M3Float32's unpacked halves, so that the narrowing needs no
// gathering of bytes across words:
//
//   - Widening: VPMADDUBSW of the signed bytes by 128 in one byte of each
//     word and 0 in the other is 128 times the odd (upper) or the even
//     element, the word s.s.eeee.mmm.0000000; an AND clears bit 14, the
//     sign's copy, leaving s.0eeee.mmm0000000, float8E4M3Float32's float16
//     of the value times 2^-8 (subnormals included).
//   - VADDPH rounds toward zero (fp8half.go's argument for why the second
//     rounding is then exact).
//   - Each result word rounds by narrowCarry's carry (VPSHLDW of w<<8 and
//     w by one bit, plus 0x7f): a float16 is sign and magnitude, so the
//     magnitude rounds the same whatever the sign, which VPSHLDW drops.
//     VPMINUB saturates the code at 0x7e (448) and one VPTERNLOG puts the
//     word's sign back above it, so each word's upper byte is its
//     element's fp8 result.
//   - Two stores masked to the odd bytes put the odd words' upper bytes at
//     dst and the even words' at dst-1, i.e. each in its element's place,
//     with no shuffle: the byte that would go to dst-1 is masked out (a
//     masked-out byte is neither written nor faults).
//
// NaN inputs are put back out of line as in float8E4M3Float32
// (e4m3NaNs), from dst's stored bytes. Per 64 bytes 24 vector
// instructions against 25 for the same sum in float8E4M3Float32's layout
// with VADDPH (two bit moves and two unpacks an input, the results' bytes
// gathered back by VPSHUFB and VPUNPCKL/HQDQ, which it replaced), and none
// shuffles but the two VPSLLDQ.
func float8E4M3SumWords() emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		c := g.c
		g.streams = 4 // see gen.streams
		nan := g.bcast32(0x7f7f7f7f)
		high, low := g.bcast32(0x80008000), g.bcast32(0x00800080) // 128 in the upper or lower byte; high is also the sign
		clear14 := g.bcast32(0xbfffbfff)
		carry, top := g.bcast32(0x007f007f), g.bcast32(0x7e7e7e7e)
		odd := c.K()
		bits := c.GP64()
		c.MOVQ(operand.U64(0xaaaaaaaaaaaaaaaa), bits)
		c.KMOVQ(bits, odd)
		nans := g.newE4M3NaNs(nan)
		widen := func(x reg.VecVirtual) (o, e reg.VecVirtual) {
			return g.and(g.to(c.VPMADDUBSW, x, high), clear14), g.and(g.to(c.VPMADDUBSW, x, low), clear14)
		}
		round := func(w reg.VecVirtual) reg.VecVirtual {
			s8 := g.to(ins3(c.VPSLLDQ), operand.U8(1), w) // bit 15 of each word is w's bit 7
			t := g.to(c.VPADDW, carry, g.vpshldw(1, s8, w))
			t = g.to(c.VPMINUB, top, t)
			c.VPTERNLOGD(orAnd, high, w, t) // the sign
			return t
		}
		arith := g.halfRZ(opSum, true, nil)
		return g.l.Width, func(d, a, b operand.Mem) {
			x, y := g.load(a), g.load(b)
			xo, xe := widen(x)
			yo, ye := widen(y)
			below := d
			below.Disp--
			c.VMOVDQU8(round(arith(xo, yo)), odd, d)
			c.VMOVDQU8(round(arith(xe, ye)), odd, below)
			nans.test(g.and(x, nan))
			nans.test(g.and(y, nan))
			nans.add(x, y, nil, d)
		}
	}
}
