package asmgen

import (
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The AVX-512 FP16 fp8 sums and products compute as the portable loops do:
// the exact float32 result rounded once to nearest even (E4M3 saturating
// at ±448). Each element widens exactly to a float16 word, the words
// combine with VADDPH or VMULPH rounding toward zero, and the truncated
// results are rounded once more, to nearest even, 64 bytes at once
// (fp8Narrower).
//
// Rounding toward zero never lands on an fp8 half-way pattern unless the
// result is exact: a product of two fp8 values has at most 8 significant
// bits, exact in float16 when in its range; a sum is exact unless the
// smaller addend lies wholly below float16's precision relative to the
// larger, and then the bits at the half-way position are the larger's
// (zero) or, after a borrow, all ones. So the second rounding gives the
// exactly rounded result; the all-pairs test (TestLevelFloat8AllPairs)
// checks every pair. A product below float16's range truncates to a signed
// zero, as its exact rounding is.

// float8E5M2Native emits the E5M2 sum or product. An E5M2 byte is the
// upper byte of the float16 of its value, so elements widen in place, in
// their 16-bit words, without shuffles: the odd element is word & 0xff00,
// the even one word << 8. NaNs need no special case: VADDPH and
// VMULPH return a's NaN if a is one, else b's, quieted, else the default
// NaN, all with a zero lower byte, which the rounding keeps. An overflow
// toward zero is 65504, which rounds to Inf as dtype does (61440 and
// above).
func float8E5M2Native(op floatOp) emitter { return float8E5M2With(op, true) }

// float8E5M2Float32 is float8E5M2Native for AVX-512 without FP16: the
// arithmetic goes through float32 (halfViaFloat32).
func float8E5M2Float32(op floatOp) emitter { return float8E5M2With(op, false) }

func float8E5M2With(op floatOp, native bool) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		n := g.newFP8Narrower(false, false)
		arith := g.halfRZ(op, native, nil)
		return g.l.Width, func(d, a, b operand.Mem) {
			x, y := g.load(a), g.load(b)
			odd := arith(n.e5m2Odd(x, y))
			even := arith(n.e5m2Even(x, y))
			g.store(n.narrow(odd, even), d)
		}
	}
}

// e5m2Odd returns the float16 words of the odd elements of x and y (each
// word & 0xff00), e5m2Even those of the even ones (each word << 8).
func (n *fp8Narrower) e5m2Odd(x, y reg.VecVirtual) (xo, yo reg.VecVirtual) {
	yo, xo = n.g.and(y, n.high), n.g.and(x, n.high)
	return xo, yo
}

func (n *fp8Narrower) e5m2Even(x, y reg.VecVirtual) (xe, ye reg.VecVirtual) {
	c := n.g.c
	ye, xe = n.g.to(c.VPSLLW, operand.U8(8), y), n.g.to(c.VPSLLW, operand.U8(8), x)
	return xe, ye
}

// float8E4M3Float32 emits the E4M3 sum or product for AVX-512 without
// FP16 (the AVX-512 FP16 level registers float8E4M3SumWords, fp8sum.go,
// and float8E4M3ProdMag, fp8mag.go, whose products the levels without FP16
// also use). An E4M3 byte s.eeee.mmm has the float16 s.0eeee.mmm0000000 of
// its value times 2^-8, E4M3's binades, subnormals included, lining up with
// float16's: two bit moves (GF2P8AFFINEQB; without GFNI shifts and masks:
// three uops for the upper bytes, two for the lower ones, three for the
// narrowing's rotate, one for its shift) make the upper bytes s.0eeee.mm
// and lower bytes m.0000000 of all 64, and VPUNPCKLBW/HBW pair them into
// words (elements 0-7 of each 128-bit lane in the first vector, 8-15 in the
// second). The float16 arithmetic goes through float32 (halfViaFloat32), a
// product scaled back up by 2^8 there, so sums and products are the results
// times 2^-8. E4M3 has no Inf; its inputs' NaNs (scaled, they widen to
// numbers) are put back by byte blends, a's over b's, out of line
// (e4m3NaNs): each body only narrows a chain of masked byte compares (one
// opmask, "no NaN so far", over a and b of the whole block) and one KORTEST
// per block branches to the blends if a byte of the block is NaN. The
// blends redo the block's stores from registers (the inputs stay live until
// then), so dst may still be exactly a or b.
func float8E4M3Float32(op floatOp, gfni bool) emitter { return float8E4M3With(op, gfni) }

func float8E4M3With(op floatOp, gfni bool) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		c := g.c
		n := g.newFP8Narrower(true, gfni)
		var scale32 reg.VecVirtual
		if op == opProd {
			scale32 = g.bcast32(0x43800000) // 256.0
		}
		arith := g.halfRZ(op, false, scale32)
		nan := g.bcast32(0x7f7f7f7f)
		var upperOf, lowerOf, low6 reg.VecVirtual
		if gfni {
			upperOf = g.bcast64(gfMatrix([8]int{1, 2, 3, 4, 5, 6, -1, 7})) // s.eeee.mmm -> s.0eeee.mm
			lowerOf = g.bcast64(gfMatrix([8]int{-1, -1, -1, -1, -1, -1, -1, 0}))
		} else {
			low6 = g.bcast32(0x3f3f3f3f)
		}
		n.loadShuffle()
		bytesOf := func(v reg.VecVirtual) (up, low reg.VecVirtual) {
			if gfni {
				return g.gf2p8affine(v, upperOf, 0), g.gf2p8affine(v, lowerOf, 0)
			}
			up = g.and(g.to(c.VPSRLW, operand.U8(1), v), low6)
			c.VPTERNLOGD(pickOp, nan, v, up) // bits 6-1 below the sign (nan is 0x7f)
			low = g.and(g.to(c.VPSLLW, operand.U8(7), v), n.half)
			return up, low
		}
		widen := func(v reg.VecVirtual) (lo, hi reg.VecVirtual) {
			up, low := bytesOf(v)
			return g.to(c.VPUNPCKLBW, up, low), g.to(c.VPUNPCKHBW, up, low)
		}
		nans := g.newE4M3NaNs(nan)
		return g.l.Width, func(d, a, b operand.Mem) {
			x, y := g.load(a), g.load(b)
			xl, xh := widen(x)
			yl, yh := widen(y)
			out := n.narrowUnpacked(arith(xl, yl), arith(xh, yh))
			g.store(out, d)
			nans.test(g.and(x, nan))
			nans.test(g.and(y, nan))
			nans.add(x, y, out, d)
		}
	}
}

// halfRZ returns the sum or product (op) of float16 words x (a's) and y
// (b's), rounded toward zero to float16, a being the first source (which
// NaN a sum or product of two returns): natively (VADDPH/VMULPH with RZ)
// or through float32 (halfViaFloat32; AVX2 has halfLater); scale32, if
// not nil, multiplies the float32 result (a power of two: exact).
func (g *gen) halfRZ(op floatOp, native bool, scale32 operand.Op) func(x, y reg.VecVirtual) reg.VecVirtual {
	if native {
		rz := vaddphRZ
		if op == opProd {
			rz = vmulphRZ
		}
		return func(x, y reg.VecVirtual) reg.VecVirtual { return g.to(g.rawTo(rz), y, x) }
	}
	return func(x, y reg.VecVirtual) reg.VecVirtual { return g.halfViaFloat32(op, scale32, x, y) }
}

// halfViaFloat32 is halfRZ without AVX-512 FP16: each 256-bit half of x
// and y widens exactly to float32 (VCVTPH2PS), combines (combineRZ) and
// narrows back toward zero.
// An fp8 sum or product is exact in float32 (package reduce, fp8.go)
// except an E5M2 sum whose smaller addend lies far below the larger's
// precision, which rounds as the portable loop's does; from there the
// argument of the native kernels holds: rounding toward zero to float16
// never lands on an fp8 half-way pattern unless the value is one. NaNs
// and infinities follow IEEE rules in both conversions (a NaN stays the
// quieted NaN with its upper payload bits, so E5M2's come out as
// VADDPH's).
func (g *gen) halfViaFloat32(op floatOp, scale32 operand.Op, x, y reg.VecVirtual) reg.VecVirtual {
	c := g.c
	var halves [2]reg.VecVirtual
	for i := range halves {
		widen := func(v reg.VecVirtual) reg.VecVirtual {
			src := v.AsY()
			if i == 1 {
				src = c.YMM()
				c.VEXTRACTI64X4(operand.U8(1), v, src)
			}
			return g.to(c.VCVTPH2PS, src)
		}
		xf := widen(x)
		halves[i] = g.combineRZ(op, scale32, xf, widen(y), c.YMM())
	}
	out := g.vec()
	c.VINSERTI64X4(operand.U8(1), halves[1], halves[0].AsZ(), out)
	return out
}

// combineRZ returns h, holding xf op yf (float32, xf the first source:
// VADDPS or VMULPS, rounding to nearest even as the portable loops'
// float32 arithmetic does), times scale32 if not nil, narrowed to float16
// by VCVTPS2PH toward zero.
func (g *gen) combineRZ(op floatOp, scale32 operand.Op, xf, yf, h reg.VecVirtual) reg.VecVirtual {
	c := g.c
	var r reg.VecVirtual
	if op == opProd {
		r = g.to(c.VMULPS, yf, xf)
		if scale32 != nil {
			r = g.to(c.VMULPS, scale32, r)
		}
	} else {
		r = g.to(c.VADDPS, yf, xf)
	}
	c.VCVTPS2PH(operand.U8(3), r, h) // rounding control 3: toward zero
	return h
}

// fp8Narrower rounds float16 results to fp8 bytes.
type fp8Narrower struct {
	g                    *gen
	e4m3                 bool
	gfni                 bool           // E4M3: bit moves by GF2P8AFFINEQB, else shifts
	high                 reg.VecVirtual // 0xff00 in every word
	one, half, top       reg.VecVirtual // 0x01, 0x80 and 0x7e in every byte
	upperMove, lowerMove reg.VecVirtual // E4M3's GF2P8AFFINEQB bit moves
	shuf                 reg.VecVirtual // narrowUnpacked's VPSHUFB control
	carry                reg.VecVirtual // narrowCarry's 0x007f in every word
	sign16, sign8        reg.VecVirtual // narrowE4M3AVX2's 0x8000 and 0x0080 in every word
}

func (g *gen) newFP8Narrower(e4m3, gfni bool) *fp8Narrower {
	n := &fp8Narrower{g: g, e4m3: e4m3, gfni: gfni, high: g.bcast32(0xff00ff00), one: g.bcast32(0x01010101), half: g.bcast32(0x80808080)}
	if e4m3 {
		n.top = g.bcast32(0x7e7e7e7e)
	}
	if e4m3 && gfni {
		n.upperMove = g.bcast64(gfMatrix([8]int{-1, 0, 1, 2, 3, 4, 5, 6})) // s.X.eeee.mm -> X.eeee.mm0
		n.lowerMove = g.bcast64(gfMatrix([8]int{7, 0, 1, 2, 3, 4, 5, 6}))  // m.rrrrrrr -> rrrrrrr.m
	}
	return n
}

// narrow returns the fp8 bytes of the float16 words odd and even (the
// results of the odd and even elements), overwriting both: it takes the
// words' upper bytes U and lower bytes L into one vector each (shifts and
// VPTERNLOG selections) and rounds them (round).
func (n *fp8Narrower) narrow(odd, even reg.VecVirtual) reg.VecVirtual {
	return n.narrowSign(odd, even, nil)
}

// narrowSign is narrow with the results' signs taken from bit 7 of each
// byte of sign (nil: from the float16 words).
func (n *fp8Narrower) narrowSign(odd, even, sign reg.VecVirtual) reg.VecVirtual {
	g, c := n.g, n.g.c
	low := g.to(c.VPSLLW, operand.U8(8), odd)
	c.VPTERNLOGD(pickOp, n.high, even, low) // odd's lower byte, even's
	up := g.to(c.VPSRLW, operand.U8(8), even)
	c.VPTERNLOGD(pickOp, n.high, up, odd) // odd's upper byte, even's
	if sign == nil {
		sign = odd
	}
	return n.round(odd, low, sign)
}

// loadShuffle loads narrowUnpacked's VPSHUFB control: in each 128-bit
// lane, the upper bytes of the 8 words, then their lower bytes.
func (n *fp8Narrower) loadShuffle() {
	var quads []uint64
	for range 4 {
		var up, low uint64
		for i := range 8 {
			up |= uint64(2*i+1) << (8 * i)
			low |= uint64(2*i) << (8 * i)
		}
		quads = append(quads, up, low)
	}
	n.shuf = n.g.vec()
	n.g.c.VMOVDQU64(n.g.constant("fp8bytesOfWords", quads), n.shuf)
}

// narrowUnpacked is narrow for words in VPUNPCKLBW/HBW's order, lo and
// hi: VPSHUFB puts each lane's upper bytes in its low quadword and lower
// bytes in its high one, and VPUNPCKLQDQ/HQDQ join the two vectors' lanes.
func (n *fp8Narrower) narrowUnpacked(lo, hi reg.VecVirtual) reg.VecVirtual {
	g, c := n.g, n.g.c
	l, h := g.to(c.VPSHUFB, n.shuf, lo), g.to(c.VPSHUFB, n.shuf, hi)
	up := g.to(c.VPUNPCKLQDQ, h, l)
	return n.round(up, g.to(c.VPUNPCKHQDQ, h, l), up)
}

// round returns the fp8 bytes of float16 words whose upper bytes are up
// and lower bytes low, in element order, overwriting both; E4M3 takes each
// result's sign from bit 7 of sign's byte (up, or the signs of magnitudes'
// products).
//
// E5M2: the result is U rounded up where L > 0x80, or L = 0x80 and U is
// odd, which is L | U&1 > 0x80 unsigned (VPCMPUB, masked VPADDB).
//
// E4M3: the result's bits are the word's sign and bits 13-7, the lowest
// of them the top of L. Bit moves (GF2P8AFFINEQB) make T = X.eeee.mm0 of
// U, X being bit 14 (set from 512 up), and R = rrrrrrr.m of L; T | R&1
// rounded up where R > 0x80 is the magnitude, which saturates at 0x7e by
// VPMINUB (448: anything from 464 up rounds there), and the sign goes
// back last.
func (n *fp8Narrower) round(up, low, sign reg.VecVirtual) reg.VecVirtual {
	g, c := n.g, n.g.c
	or := orAnd
	k := c.K()
	if !n.e4m3 {
		c.VPTERNLOGD(or, n.one, up, low)
		c.VPCMPUB(operand.U8(6), n.half, low, k) // > 0x80
		c.VPADDB(n.one, up, k, up)
		return up
	}
	var t, r reg.VecVirtual
	if n.gfni {
		t, r = g.gf2p8affine(up, n.upperMove, 0), g.gf2p8affine(low, n.lowerMove, 0)
	} else {
		t = g.to(c.VPADDB, up, up) // each byte shifted left by one
		r = g.to(c.VPADDB, low, low)
		c.VPTERNLOGD(or, n.one, g.to(c.VPSRLW, operand.U8(7), low), r) // bit 7 to bit 0
	}
	c.VPCMPUB(operand.U8(6), n.half, r, k) // r > 0x80
	c.VPTERNLOGD(or, n.one, r, t)
	c.VPADDB(n.one, t, k, t)
	t = g.to(c.VPMINUB, n.top, t)
	c.VPTERNLOGD(or, n.half, sign, t) // the sign
	return t
}

// gf2p8affine emits VGF2P8AFFINEQB: each byte of x multiplied by the bit
// matrix in the quadword of m, xor b. Go's assembler knows it; avo does
// not, so it goes in as an instruction avo only allocates registers for.
func (g *gen) gf2p8affine(x, m reg.VecVirtual, b uint8) reg.VecVirtual {
	r := g.vec()
	ops := []operand.Op{operand.U8(b), m, x, r}
	g.c.Instruction(&ir.Instruction{
		Opcode:   "VGF2P8AFFINEQB",
		Operands: ops,
		Inputs:   ops[1:3],
		Outputs:  ops[3:],
		ISA:      []string{"AVX512F", "GFNI"},
	})
	return r
}

// gfMatrix returns the GF2P8AFFINEQB matrix that moves bit from[i] of a
// byte to bit i (nothing where from[i] is -1): row i, which selects the
// bits whose parity is bit i, is the matrix's byte 7-i.
func gfMatrix(from [8]int) uint64 {
	var m uint64
	for i, f := range from {
		if f >= 0 {
			m |= uint64(1<<f) << (8 * (7 - i))
		}
	}
	return m
}

// orAnd is VPTERNLOGD's a | b&c.
var orAnd = operand.U8(ternary(func(a, b, c bool) bool { return a || b && c }))

// pickOp is VPTERNLOGD's c ? a : b (bitwise), c its first operand in Go's
// order and a the destination.
var pickOp = operand.U8(ternary(func(a, b, c bool) bool { return c && a || !c && b }))

// ternary returns VPTERNLOG's immediate for f(a, b, c), a the destination
// operand (last in Go's order), c the first.
func ternary(f func(a, b, c bool) bool) uint8 {
	var imm uint8
	for i := range 8 {
		if f(i&4 != 0, i&2 != 0, i&1 != 0) {
			imm |= 1 << i
		}
	}
	return imm
}
