package asmgen

import (
	"fmt"
	"math"

	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// float8Native emits an AVX-512 FP16 fp8 sum or product, 64 elements per
// body, as the portable loops compute it: the exact float32 result rounded
// once to nearest even (E4M3 saturating at ±448). Each element widens
// exactly to a float16 word, the words combine with VADDPH or VMULPH
// rounding toward zero, and the truncated results are rounded once more,
// to nearest even, on bytes (narrowFloat8).
//
// Widening. An E5M2 byte is the upper byte of the float16 of its value
// (VPUNPCKLBW/HBW with zero). An E4M3 byte s.eeee.mmm has the float16
// s.0eeee.mmm0000000 of its value times 2^-8, E4M3's binades, subnormals
// included, lining up with float16's: the upper byte s.0eeee.mm comes
// from a 128-entry VPERMI2B table of the magnitude with the sign put back
// (VPTERNLOG), the lower byte m.0000000 from the byte by a GF2P8AFFINEQB
// bit move, and VPUNPCKL/HBW pair them. The table maps E4M3's NaN, which
// has no float16 counterpart at this scale, to the float16 quiet NaN
// s.11111.1110000000, so NaNs travel through the arithmetic: VADDPH and
// VMULPH return a's NaN if a is one, else b's. A product widens b at
// scale 1 instead (two tables, upper and lower byte: E4M3's subnormals are
// normal float16 numbers there), so it too is the result times 2^-8.
//
// Arithmetic. Rounding toward zero never lands on an fp8 half-way pattern
// unless the result is exact: a product of two fp8 values has at most 8
// significant bits, exact in float16 when in its range; a sum is exact
// unless the smaller addend lies wholly below float16's precision
// relative to the larger, and then the bits at the half-way position are
// the larger's (zero) or, after a borrow, all ones. So the second rounding
// gives the exactly rounded result; the all-pairs test
// (TestLevelFloat8AllPairs) checks every pair. An E5M2 overflow toward
// zero is 65504, which rounds to Inf as dtype does (61440 and above); a
// product below float16's range truncates to a signed zero, as its exact
// rounding is. An E4M3 result is clamped to ±448 (VMINPH, VMAXPH: a NaN
// passes, being their second source), which rounds to itself and is what
// saturation gives for anything beyond.
func float8Native(e4m3 bool, op floatOp) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		c := g.c
		n := g.newNarrow(e4m3)
		rz := vaddphRZ
		if op == opProd {
			rz = vmulphRZ
		}
		if !e4m3 {
			high := g.bcast32(0xff00ff00)
			return g.l.Width, func(d, a, b operand.Mem) {
				x, y := g.load(a), g.load(b)
				// odd elements: the word's upper byte; even: its lower
				odd := g.to(g.rawTo(rz), g.and(y, high), g.and(x, high))
				even := g.to(g.rawTo(rz), g.to(c.VPSLLW, operand.U8(8), y), g.to(c.VPSLLW, operand.U8(8), x))
				g.store(n.narrowWords(odd, even, high), d)
			}
		}
		sign := g.bcast32(0x80808080)
		lowBit := g.bcast64(gfMatrix([8]int{-1, -1, -1, -1, -1, -1, -1, 0})) // m.0000000
		wa := g.newWiden(-8, sign, lowBit)
		wb := wa
		if op == opProd {
			wb = g.newWiden(0, sign, lowBit)
		}
		lo, hi := g.bcast32(0xbf00bf00), g.bcast32(0x3f003f00) // ±448 times 2^-8
		return g.l.Width, func(d, a, b operand.Mem) {
			xa, xb := wa.widen(a), wb.widen(b)
			var h [2]reg.VecVirtual
			for j := range h {
				r := g.to(g.rawTo(rz), xb[j], xa[j]) // a is the first source
				h[j] = g.to(g.rawTo(vmaxph), g.to(g.rawTo(vminph), r, hi), lo)
			}
			g.store(n.narrow(h), d)
		}
	}
}

// widener widens 64 E4M3 bytes to two vectors of float16 words by a
// table of the upper byte and, where the table says so, of the lower.
type widener struct {
	g            *gen
	upper, lower [2]reg.VecVirtual // the 128-entry tables, lower unset if by lowBit
	sign, lowBit reg.VecVirtual
	byTable      bool
}

// e4m3Widen returns the upper and lower bytes of the float16 of each E4M3
// magnitude (0..127) times 2^scale, the NaN (127) as the quiet NaN
// 0x7f80.
func e4m3Widen(scale int) (upper, lower [128]byte) {
	for m := range 127 {
		e, f := m>>3, m&7
		v := math.Ldexp(float64(f), -9+scale) // subnormal
		if e != 0 {
			v = math.Ldexp(float64(8+f), e-10+scale)
		}
		h := float16Bits(v)
		upper[m], lower[m] = byte(h>>8), byte(h)
	}
	upper[127], lower[127] = 0x7f, 0x80
	return upper, lower
}

// float16Bits returns the float16 encoding of v, a positive value that is
// exactly a float16 number.
func float16Bits(v float64) uint16 {
	if v < 0x1p-14 { // subnormal or zero: multiples of 2^-24
		return uint16(v * 0x1p24)
	}
	frac, exp := math.Frexp(v) // v = frac * 2^exp, frac in [0.5, 1)
	return uint16(exp-1+15)<<10 | uint16(frac*2048)&0x3ff
}

// newWiden loads the tables of e4m3Widen(scale); a lower-byte table that
// is the byte's lowest bit moved to the top is not loaded but computed.
func (g *gen) newWiden(scale int, sign, lowBit reg.VecVirtual) *widener {
	upper, lower := e4m3Widen(scale)
	w := &widener{g: g, sign: sign, lowBit: lowBit}
	for m := range lower {
		if lower[m] != byte(m&1)<<7 && m != 127 {
			w.byTable = true
		}
	}
	w.upper = g.table(fmt.Sprintf("fp8upper%d", -scale), upper)
	if w.byTable {
		w.lower = g.table(fmt.Sprintf("fp8lower%d", -scale), lower)
	}
	return w
}

// table loads a 128-byte VPERMI2B table into two registers.
func (g *gen) table(name string, t [128]byte) [2]reg.VecVirtual {
	var out [2]reg.VecVirtual
	for h := range out {
		var quads []uint64
		for q := range 8 {
			var v uint64
			for i := range 8 {
				v |= uint64(t[64*h+8*q+i]) << (8 * i)
			}
			quads = append(quads, v)
		}
		m := g.constant(fmt.Sprintf("%s_%d", name, h), quads)
		out[h] = g.vec()
		g.c.VMOVDQU64(m, out[h])
	}
	return out
}

// widen loads the 64 bytes at m and returns their float16 words, elements
// 0-7 of each 128-bit lane in the first vector and 8-15 in the second.
func (w *widener) widen(m operand.Mem) [2]reg.VecVirtual {
	g, c := w.g, w.g.c
	x := g.load(m)
	up := g.load(m) // VPERMI2B overwrites its index
	c.VPERMI2B(w.upper[1], w.upper[0], up)
	c.VPTERNLOGD(operand.U8(ternary(func(a, b, c bool) bool { return a || b && c })), w.sign, x, up) // up | x&0x80
	var low reg.VecVirtual
	if w.byTable {
		low = g.load(m)
		c.VPERMI2B(w.lower[1], w.lower[0], low)
	} else {
		low = g.gf2p8affine(x, w.lowBit, 0)
	}
	return [2]reg.VecVirtual{g.to(c.VPUNPCKLBW, up, low), g.to(c.VPUNPCKHBW, up, low)}
}

// narrower rounds float16 words to fp8 bytes.
type narrower struct {
	g                    *gen
	e4m3                 bool
	one, half            reg.VecVirtual // 0x01 and 0x80 in every byte
	upperMove, lowerMove reg.VecVirtual // E4M3's GF2P8AFFINEQB matrices
	upperIdx, lowerIdx   operand.Mem    // VPERMI2B indices
}

func (g *gen) newNarrow(e4m3 bool) *narrower {
	n := &narrower{g: g, e4m3: e4m3, one: g.bcast32(0x01010101), half: g.bcast32(0x80808080)}
	if e4m3 {
		// s.0eeee.mm -> s.eeee.mm0, and m.rrrrrrr -> rrrrrrr.m
		n.upperMove = g.bcast64(gfMatrix([8]int{-1, 0, 1, 2, 3, 4, 5, 7}))
		n.lowerMove = g.bcast64(gfMatrix([8]int{7, 0, 1, 2, 3, 4, 5, 6}))
	}
	var up, low []uint64
	for q := range 8 {
		var u, l uint64
		for i := range 8 {
			e := 8*q + i // element: lane e/16, its (e%16)th
			k := e % 16
			w := 8*(e/16) + k // word of the first vector...
			if k >= 8 {
				w = 64/2 + 8*(e/16) + k - 8 // ...or of the second
			}
			u |= uint64(2*w+1) << (8 * i)
			l |= uint64(2*w) << (8 * i)
		}
		up, low = append(up, u), append(low, l)
	}
	n.upperIdx, n.lowerIdx = g.constant("fp8upperIdx", up), g.constant("fp8lowerIdx", low)
	return n
}

// narrowWords rounds the float16 words odd and even (the results of the
// odd and even elements) as narrow does, taking their upper and lower
// bytes with shifts and VPTERNLOG selections (high: 0xff00 in each word).
func (n *narrower) narrowWords(odd, even, high reg.VecVirtual) reg.VecVirtual {
	g, c := n.g, n.g.c
	pick := operand.U8(ternary(func(a, b, c bool) bool { return c && a || !c && b })) // c ? a : b
	low := g.to(c.VPSLLW, operand.U8(8), odd)
	c.VPTERNLOGD(pick, high, even, low) // odd's lower byte, even's
	up := g.to(c.VPSRLW, operand.U8(8), even)
	c.VPTERNLOGD(pick, high, up, odd) // odd's upper byte, even's
	return n.round(odd, low)
}

// narrow rounds the float16 words of h (in widen's order) to the fp8
// bytes: with the upper bytes U and lower bytes L of the words, an E5M2
// result is U rounded up where L > 0x80, or L = 0x80 and U is odd, which
// is L | U&1 > 0x80 unsigned. An E4M3 result's bits are the word's sign
// and bits 13-7, its lowest bit the top of L: a bit move makes T =
// s.eeee.mm0 of U and R = rrrrrrr.m of L, and the result is T | R&1
// rounded up where R > 0x80. The words of an E4M3 result are at most
// 0x3f00 in magnitude (bit 14 clear) or the NaN s.11111.1110000000, which
// narrows to s.1111111.
func (n *narrower) narrow(h [2]reg.VecVirtual) reg.VecVirtual {
	g, c := n.g, n.g.c
	pick := func(idx operand.Mem) reg.VecVirtual {
		r := g.load(idx)
		c.VPERMI2B(h[1], h[0], r)
		return r
	}
	return n.round(pick(n.upperIdx), pick(n.lowerIdx))
}

// round returns the fp8 bytes of the float16 words whose upper bytes are
// up and lower bytes low (see narrow), overwriting both.
func (n *narrower) round(up, low reg.VecVirtual) reg.VecVirtual {
	g, c := n.g, n.g.c
	or := operand.U8(ternary(func(a, b, c bool) bool { return a || b && c })) // a | b&c
	k := c.K()
	if n.e4m3 {
		t, r := g.gf2p8affine(up, n.upperMove, 0), g.gf2p8affine(low, n.lowerMove, 0)
		c.VPCMPUB(operand.U8(6), n.half, r, k) // r > 0x80
		c.VPTERNLOGD(or, n.one, r, t)
		c.VPADDB(n.one, t, k, t)
		return t
	}
	c.VPTERNLOGD(or, n.one, up, low)
	c.VPCMPUB(operand.U8(6), n.half, low, k)
	c.VPADDB(n.one, up, k, up)
	return up
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
