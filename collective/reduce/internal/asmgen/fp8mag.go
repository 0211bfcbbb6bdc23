package asmgen

import (
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// float8E4M3ProdMag emits the AVX-512 FP16 E4M3 product on magnitudes:
// the sign of a product is the XOR of its inputs' signs, so the float16
// arithmetic needs only |a| and |b|, and a magnitude widens in place by one
// multiply: VPMADDUBSW of the bytes m = x & 0x7f by 128 in one byte of
// each word and 0 in the other is the word m<<7 of the even or the odd
// element, which is the float16 of |x| times 2^-8 (float8E4M3Float32's
// scaling, subnormals included; the multiplier is VPMADDUBSW's unsigned
// operand, m its signed one, and 128*127 does not saturate). The masked
// bytes m also serve the NaN test (m == 0x7f), so per input one AND, one
// compare and two multiplies replace the two bit moves, two unpacks, AND
// and compare of float8E4M3Float32, and the words come in element pairs as
// E5M2's do. b's words are scaled back up by 2^8 (exact) as there; VMULPH
// rounds toward zero and the narrowing rounds once more to nearest even
// (fp8half.go's argument), here in each word by a carry (narrowCarry,
// which the products' being non-negative allows), the results' signs
// coming from a XOR b. NaNs are put back out of line as in
// float8E4M3Float32 (e4m3NaNs).
func float8E4M3ProdMag() emitter { return float8E4M3ProdMagWith(true, true) }

// float8E4M3ProdMagFloat32 is float8E4M3ProdMag for AVX-512 without FP16:
// the float16 products are computed in float32 (halfViaFloat32), b's 2^8
// there; the widening needs no GFNI, the narrowing (narrowSign's, as
// these levels do not require AVX512_VBMI2) uses it if gfni.
func float8E4M3ProdMagFloat32(gfni bool) emitter { return float8E4M3ProdMagWith(false, gfni) }

func float8E4M3ProdMagWith(native, gfni bool) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		c := g.c
		if native {
			g.streams = 4 // see gen.streams
		}
		n := g.newFP8Narrower(true, gfni && !native) // narrowCarry needs no bit moves
		var scale, scale32 reg.VecVirtual
		if native {
			scale = g.bcast32(0x5c005c00) // 256.0
		} else {
			scale32 = g.bcast32(0x43800000) // 256.0
		}
		nan := g.bcast32(0x7f7f7f7f)
		lowBy128, highBy128 := g.bcast32(0x00800080), g.bcast32(0x80008000)
		arith := g.halfRZ(opProd, native, scale32)
		nans := g.newE4M3NaNs(nan)
		if native {
			n.loadCarry()
		}
		widen := func(m reg.VecVirtual) (odd, even reg.VecVirtual) {
			return g.to(c.VPMADDUBSW, m, highBy128), g.to(c.VPMADDUBSW, m, lowBy128)
		}
		return g.l.Width, func(d, a, b operand.Mem) {
			x, y := g.load(a), g.load(b)
			xm, ym := g.and(x, nan), g.and(y, nan)
			xo, xe := widen(xm)
			yo, ye := widen(ym)
			if native {
				yo, ye = g.to(g.rawTo(vmulph), yo, scale), g.to(g.rawTo(vmulph), ye, scale)
			}
			var out reg.VecVirtual
			if native {
				out = n.narrowCarry(arith(xo, yo), arith(xe, ye), g.xor(x, y))
			} else {
				out = n.narrowSign(arith(xo, yo), arith(xe, ye), g.xor(x, y))
			}
			g.store(out, d)
			nans.test(xm)
			nans.test(ym)
			nans.add(x, y, out, d)
		}
	}
}

// loadCarry loads narrowCarry's constant.
func (n *fp8Narrower) loadCarry() { n.carry = n.g.bcast32(0x007f007f) }

// narrowCarry is narrowSign for non-negative float16 words (the products
// of magnitudes), rounding each word in place by a carry instead of on
// gathered bytes: VPSHLDW of the word w and w<<8 by one bit is T.R, T = bits
// 14-7 of w (X.eeee.mmm, round's T with its last bit) and R = bits 6-0 then
// bit 7 (rrrrrrr.m, round's R), so adding 0x7f carries into T exactly where
// R > 0x80, which is round's rounding up. The even words' codes, shifted
// down, and the odd words' join by one VPTERNLOG into bytes in element
// order; VPMINUB saturates at 0x7e and the signs (bit 7 of sign's bytes) go
// in last. The moves by a byte are VPSLLDQ/VPSRLDQ (within 128-bit lanes,
// never across a word's two bytes), on the shuffle port, as VPSHLDW,
// VPMINUB and the word shifts take the other one here (VPSLLW/VPSRLW in
// their place measured 0.5% faster than narrowSign, these 6%). 10 vector
// instructions per 64 bytes against narrowSign's 11 (no bit moves, no
// compare); it needs AVX512_VBMI2 (VPSHLDW), which every AVX-512 FP16 CPU
// has, and loadCarry must have been called.
func (n *fp8Narrower) narrowCarry(odd, even, sign reg.VecVirtual) reg.VecVirtual {
	g, c := n.g, n.g.c
	carried := func(w reg.VecVirtual) reg.VecVirtual {
		s8 := g.to(ins3(c.VPSLLDQ), operand.U8(1), w) // bit 15 of each word is w's bit 7
		return g.to(c.VPADDW, n.carry, g.vpshldw(1, s8, w))
	}
	o, e := carried(odd), carried(even)
	e = g.to(ins3(c.VPSRLDQ), operand.U8(1), e) // its code in the lower byte
	c.VPTERNLOGD(pickOp, n.high, e, o)          // odd's code in the upper byte, even's in the lower
	t := g.to(c.VPMINUB, n.top, o)
	c.VPTERNLOGD(orAnd, n.half, sign, t) // the sign
	return t
}

// vpshldw emits VPSHLDW: each word of hi shifted left by imm bits, its
// vacated low bits filled with the top imm bits of lo's word. Go's
// assembler knows it; avo v0.5.0 does not (as gf2p8affine).
func (g *gen) vpshldw(imm uint8, lo, hi reg.VecVirtual) reg.VecVirtual {
	r := g.vec()
	ops := []operand.Op{operand.U8(imm), lo, hi, r}
	g.c.Instruction(&ir.Instruction{
		Opcode:   "VPSHLDW",
		Operands: ops,
		Inputs:   ops[1:3],
		Outputs:  ops[3:],
		ISA:      []string{"AVX512F", "AVX512VBMI2"},
	})
	return r
}

// e4m3NaNs puts E4M3 inputs' NaNs back out of line, for kernels whose
// arithmetic turns them into numbers: each body chains masked byte
// compares of its inputs' magnitudes (test) into one opmask, "no NaN so
// far" over the whole block, and notes its registers (add); at the block's
// end one KORTEST branches, if a byte of the block is NaN, to blends that
// redo the block's stores from registers with a's NaNs over b's (the inputs
// stay live until then, so dst may still be exactly a or b).
type e4m3NaNs struct {
	g     *gen
	nan   reg.VecVirtual // 0x7f in every byte
	block []nanStore
	clean reg.Register // bytes of the block with no NaN in a or b
}

type nanStore struct {
	x, y, out reg.VecVirtual
	d         operand.Mem
}

// newE4M3NaNs returns the kernel's NaN bookkeeping and sets g.blockEnd.
func (g *gen) newE4M3NaNs(nan reg.VecVirtual) *e4m3NaNs {
	s := &e4m3NaNs{g: g, nan: nan}
	g.blockEnd = s.end
	return s
}

// test chains the compare of m (input bytes & 0x7f) with 0x7f.
func (s *e4m3NaNs) test(m reg.VecVirtual) {
	c := s.g.c
	notNaN := operand.U8(4) // VPCMPUB's "not equal"
	if s.clean == nil {
		s.clean = c.K()
		c.VPCMPUB(notNaN, s.nan, m, s.clean)
		return
	}
	c.VPCMPUB(notNaN, s.nan, m, s.clean, s.clean)
}

// add notes a body's inputs x and y, its result out and where it went
// (out nil: the result is read back from d, where the body stored it).
func (s *e4m3NaNs) add(x, y, out reg.VecVirtual, d operand.Mem) {
	s.block = append(s.block, nanStore{x, y, out, d})
}

func (s *e4m3NaNs) end() {
	g, c := s.g, s.g.c
	slow, done := g.label("nan"), g.label("done")
	c.KORTESTQ(s.clean, s.clean)
	c.JCC(operand.LabelRef(slow)) // CF clear: not all bytes clean
	c.Label(done)
	stores, nan := s.block, s.nan
	g.tail = append(g.tail, func() {
		c.Label(slow)
		for _, st := range stores {
			if st.out == nil {
				st.out = g.load(st.d)
			}
			ka, kb := c.K(), c.K()
			c.VPCMPEQB(nan, g.and(st.x, nan), ka)
			c.VPCMPEQB(nan, g.and(st.y, nan), kb)
			c.VMOVDQU8(st.y, kb, st.out)
			c.VMOVDQU8(st.x, ka, st.out)
			g.store(st.out, st.d)
		}
		c.JMP(operand.LabelRef(done))
	})
	s.block, s.clean = nil, nil
}
