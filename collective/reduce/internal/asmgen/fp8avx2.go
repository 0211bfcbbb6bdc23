package asmgen

import (
	"fmt"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// fp8AVX2 lists the AVX2 fp8 sums and products. They compute as the
// AVX-512 ones without FP16 do (fp8half.go): each element widens exactly
// to a float16 word in its own 16-bit lane, pairs of halves combine in
// float32 (halfViaFloat32: VCVTPH2PS, VADDPS or VMULPS, VCVTPS2PH toward
// zero) and each truncated word rounds once more to nearest even by a
// carry in place, so the results need no shuffle back into bytes.
//
// On AMD Zen 3 (session 27) they ran at 3.5-4.9 GB/s from L2 against 2.15
// for the gathers from the table of all pairs they replaced, bound by the
// conversions: 12 a 32 bytes, VCVTPH2PS and VCVTPS2PH from and into
// registers one a cycle (bench/uops_probe.sh with ISA=avx2; a loop of one
// E5M2 body from L1 took 20 cycles, 10 without the conversions, 13 with
// only them). Working on 128-bit halves (no VEXTRACTI128/VINSERTI128) or
// ordering each stage over all halves measured within 7% of that form
// either way. Since session 28 the words go through a scratch buffer on
// the stack (halfViaFloat32): VCVTPH2PS from memory takes half a cycle
// there, and the upper halves need no VEXTRACTI128; E5M2 sum 4.84 -> 6.54
// GB/s, product 4.73 -> 6.55, E4M3 sum 3.83 -> 4.44, product 3.74 -> 4.49
// (bench/kernel_probe.sh, 256 KiB, wall medians, load 36). Since session
// 29 each body stores its words a block before converting them (later),
// and E4M3 tests a block for NaNs once: E5M2 sum 6.65 -> 7.61 GB/s, E4M3
// sum 4.46 -> 5.41 (bench/kernels_ab.sh, 256 KiB, load 15). Since session
// 31 they run in the pipe form (pipeLoop): E5M2 sum 7.51 -> 7.92 GB/s,
// product 7.59 -> 8.12, E4M3 sum 5.36 -> 5.56, product 5.10 -> 5.45 at 256
// KiB (bench/kernel_probe.sh, wall medians, load 17-22); at 64 MiB
// thread-CPU best +1-4% (sums; medians -11..+7%) and +3-7% (products) in
// four to six sittings at load 17-27. The routes'
// complete floors on that CPU (bench/fp8_bound.sh ISA=avx2) are all below
// issue 17's targets (bench/results/kernels_fp8.md, session 31).
var fp8AVX2 = []kernel{
	{"sumFloat8E4M3", "Sum", []string{"Float8E4M3Type"}, float8E4M3AVX2(opSum), true},
	{"prodFloat8E4M3", "Prod", []string{"Float8E4M3Type"}, float8E4M3AVX2(opProd), true},
	{"sumFloat8E5M2", "Sum", []string{"Float8E5M2Type"}, float8E5M2AVX2(opSum), true},
	{"prodFloat8E5M2", "Prod", []string{"Float8E5M2Type"}, float8E5M2AVX2(opProd), true},
}

// halfLater is halfRZ at AVX2, in two phases: the returned function
// stores x and y to the scratch buffer at once (spill) and returns their
// sum or product as halfFromSpills computes it, to call in the body's
// second phase (gen.later). Its kernels run one stream (see streamCount).
func (g *gen) halfLater(op floatOp, scale32 operand.Op) func(x, y reg.VecVirtual) func() reg.VecVirtual {
	g.scratchBuffer()
	g.streams = 1
	return func(x, y reg.VecVirtual) func() reg.VecVirtual {
		mx, my := g.spill(x), g.spill(y)
		return func() reg.VecVirtual { return g.halfFromSpills(op, scale32, mx, my) }
	}
}

// halfFromSpills is halfViaFloat32 at AVX2 for words x and y stored at mx
// and my: each 128-bit half widens by VCVTPH2PS from memory, which takes
// half the time of one from a register on AMD Zen 3 and needs no
// VEXTRACTI128 for the upper half (session 28), and the halves of the
// result join by VINSERTI128.
func (g *gen) halfFromSpills(op floatOp, scale32 operand.Op, mx, my operand.Mem) reg.VecVirtual {
	c := g.c
	var halves [2]reg.VecVirtual
	for i := range halves {
		xf := g.to(c.VCVTPH2PS, shifted(mx, 16*i))
		halves[i] = g.combineRZ(op, scale32, xf, g.to(c.VCVTPH2PS, shifted(my, 16*i)), c.XMM())
	}
	out := g.vec()
	c.VINSERTI128(operand.U8(1), halves[1], halves[0].AsY(), out)
	return out
}

// float8E5M2AVX2 emits the E5M2 sum or product at AVX2 as
// float8E5M2Float32 does at AVX-512, its words through the scratch buffer
// (halfLater) and rounded by narrowE5M2AVX2, in the pipe form (pipeLoop).
func float8E5M2AVX2(op floatOp) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		n := g.newFP8Narrower(false, false)
		n.loadCarry()
		g.pipe = true
		arith := g.halfLater(op, nil)
		return g.l.Width, func(d, a, b operand.Mem) {
			x, y := g.load(a), g.load(b)
			odd := arith(n.e5m2Odd(x, y))
			even := arith(n.e5m2Even(x, y))
			g.later(func() { g.store(n.narrowE5M2AVX2(odd(), even()), d) })
		}
	}
}

// narrowE5M2AVX2 is narrow at AVX2: each word w rounds in place to its
// upper byte, w + 0x7f + (w>>8 & 1) (a carry into the upper byte where the
// lower one is above 0x80, or 0x80 with the upper byte odd: to nearest
// even); the odd words keep their upper bytes, the even ones' move down.
// NaN words have a zero lower byte (see float8E5M2Native), which the carry
// keeps; an overflow truncated to 65504 (0x7bff) carries to Inf (0x7c).
func (n *fp8Narrower) narrowE5M2AVX2(odd, even reg.VecVirtual) reg.VecVirtual {
	g, c := n.g, n.g.c
	carried := func(w reg.VecVirtual) reg.VecVirtual {
		lsb := g.and(g.to(c.VPSRLW, operand.U8(8), w), n.one)
		return g.to(c.VPADDW, lsb, g.to(c.VPADDW, n.carry, w))
	}
	o := g.and(carried(odd), n.high)
	e := g.to(c.VPSRLW, operand.U8(8), carried(even))
	return g.or(o, e)
}

// narrowE4M3AVX2 is narrowCarry at AVX2 for signed words: 2w + (w>>7 & 1)
// is narrowCarry's T.R (the sign shifted out), and adding 0x7f carries into
// T where R > 0x80; the odd words' T stays in their upper bytes, the even
// ones' moves down, VPMINUB saturates the codes at 0x7e and the words'
// signs go in last. word1, high, top and carry hold 0x0001, 0xff00,
// 0x7e7e and 0x007f in every word (AVX2's 16 registers do not hold all the
// kernel's constants: some are memory operands).
//
// signs, if not nil, holds the results' signs in bit 7 of each byte (and
// nothing else), for words that are magnitudes.
func (n *fp8Narrower) narrowE4M3AVX2(odd, even, signs reg.VecVirtual, word1, high, top, carry operand.Op) reg.VecVirtual {
	g, c := n.g, n.g.c
	carried := func(w reg.VecVirtual) reg.VecVirtual {
		m := g.and(word1, g.to(c.VPSRLW, operand.U8(7), w))
		return g.to(c.VPADDW, carry, g.or(g.to(c.VPADDW, w, w), m))
	}
	o := g.and(high, carried(odd))
	e := g.to(c.VPSRLW, operand.U8(8), carried(even))
	t := g.to(c.VPMINUB, top, g.or(o, e))
	if signs == nil {
		signs = g.or(g.and(odd, n.sign16), g.and(g.to(c.VPSRLW, operand.U8(8), even), n.sign8))
	}
	return g.or(t, signs)
}

// float8E4M3AVX2 emits the E4M3 sum or product at AVX2: the words widen as
// float8E4M3SumWords's do (VPMADDUBSW of the signed bytes by 128, bit 14
// cleared: the float16 of the value times 2^-8), a product's from the
// magnitudes as float8E4M3ProdMag's (3.42 -> 3.77 GB/s at 256 KiB on AMD
// Zen 3) and scaled back up by 2^8 in float32 (exact), and narrowE4M3AVX2
// rounds. An E4M3 NaN input widens to a number, so the first phases test
// the block's inputs for NaN bytes (one VPTEST a block, before any of its
// stores), and a block with one runs its second phases out of line, each
// putting a's NaNs over b's over its result. The second phases load a and
// b again (for the product's signs and the NaNs): a body's bytes are not
// touched by the block's other bodies, so dst may be exactly a or b. Its
// loops run in the pipe form (pipeLoop; the NaN flag is carried).
func float8E4M3AVX2(op floatOp) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		c := g.c
		n := &fp8Narrower{g: g, e4m3: true}
		n.sign16, n.sign8 = g.bcast32(0x80008000), g.bcast32(0x00800080)
		word1, high, top, carry := g.splat32(0x00010001), g.splat32(0xff00ff00), g.splat32(0x7e7e7e7e), g.splat32(0x007f007f)
		var scale32 operand.Op
		var sign80 operand.Op
		if op == opProd {
			scale32 = g.splat32(0x43800000) // 256.0
			sign80 = g.splat32(0x80808080)
		}
		g.pipe = true
		arith := g.halfLater(op, scale32)
		nan := g.bcast32(0x7f7f7f7f)
		clear14 := g.bcast32(0xbfffbfff)
		isNaN := func(x reg.VecVirtual) reg.VecVirtual { return g.to(c.VPCMPEQB, nan, g.and(x, nan)) }
		// block holds the second phases of the block's bodies so far,
		// most the largest masked byte of their inputs (0x7f: a NaN).
		var block []func(fix bool)
		var most reg.VecVirtual
		return g.l.Width, func(d, a, b operand.Mem) {
			var xo, xe, yo, ye, xm, ym reg.VecVirtual
			if op == opProd {
				// On magnitudes, as float8E4M3ProdMag: the words of
				// xm and ym need no bit 14 cleared, and the sign
				// is a's XOR b's.
				xm, ym = g.and(a, nan), g.and(b, nan)
				xo, xe = g.to(c.VPMADDUBSW, xm, n.sign16), g.to(c.VPMADDUBSW, xm, n.sign8)
				yo, ye = g.to(c.VPMADDUBSW, ym, n.sign16), g.to(c.VPMADDUBSW, ym, n.sign8)
			} else {
				widen := func(x operand.Mem) (o, e reg.VecVirtual) {
					return g.and(g.to(c.VPMADDUBSW, x, n.sign16), clear14), g.and(g.to(c.VPMADDUBSW, x, n.sign8), clear14)
				}
				xo, xe = widen(a)
				yo, ye = widen(b)
				xm, ym = g.and(a, nan), g.and(b, nan)
			}
			odd, even := arith(xo, yo), arith(xe, ye)
			m := g.to(c.VPMAXUB, ym, xm)
			if len(block) > 0 {
				m = g.to(c.VPMAXUB, most, m)
			}
			most = m
			block = append(block, func(fix bool) {
				var x, y, signs reg.VecVirtual
				if op == opProd || fix {
					x, y = g.load(a), g.load(b)
				}
				if op == opProd {
					signs = g.and(sign80, g.xor(x, y))
				}
				out := n.narrowE4M3AVX2(odd(), even(), signs, word1, high, top, carry)
				if fix {
					out = g.to(ins4(c.VPBLENDVB), isNaN(y), y, out)
					out = g.to(ins4(c.VPBLENDVB), isNaN(x), x, out)
				}
				g.store(out, d)
			})
			if len(block) == g.l.Block/g.l.Width {
				g.laterBlock(g.to(c.VPCMPEQB, nan, most), block)
				block = nil
			}
		}
	}
}

// laterBlock emits the block's second phases, each called with false, as
// one later phase if no bit of flag is set; else, out of line, each called
// with true.
func (g *gen) laterBlock(flag reg.VecVirtual, phases []func(fix bool)) {
	g.carried = append(g.carried, flag)
	g.later(func() {
		c := g.c
		c.VPTEST(flag, flag)
		slow, done := g.label("nan"), g.label("done")
		c.JNE(operand.LabelRef(slow))
		for _, f := range phases {
			f(false)
		}
		c.Label(done)
		g.tail = append(g.tail, func() {
			c.Label(slow)
			for _, f := range phases {
				f(true)
			}
			c.JMP(operand.LabelRef(done))
		})
	})
}

// splat32 returns a 32-byte memory constant with x in every 32-bit lane
// (AVX2 only).
func (g *gen) splat32(x uint32) operand.Mem {
	q := uint64(x)<<32 | uint64(x)
	return g.constant(fmt.Sprintf("splat%08x", x), []uint64{q, q, q, q})
}

// pipeLoop emits the in-order loop at label (emitted) of a kernel whose bodies
// defer their second phases (gen.later) and keep nothing for them but
// memory and constants, in the pipe form: before the loop, the first
// phases of the block at i (words into the scratch buffer); each
// iteration the first phases of the next block (into the buffer's other
// half) and then this block's second phases, the halves swapped at its
// end; after it, the last block's second phases. first(ahead) emits the
// block's body calls ahead bytes on from i. The next block's inputs are
// read before this block's stores, and no body's bytes are another's, so
// dst may still be exactly a or b. Registers the first phases leave to the
// second (gen.carried) are moved, at the iteration's end, to those of the
// first phases before the loop, which the second phases read.
//
// Why: with a block's second phases right after its own first phases, the
// scratch buffer's store-to-load forwarding was still on their path; with
// the next block's first phases between them, the two are independent
// work in one iteration. Complete floor loops of the E5M2 sum in
// bench/fp8_bound.sh (ISA=avx2, AMD Zen 3, 256 KiB): two-phase 7.45 GB/s,
// pipe 7.95 (E4M3 sum 5.39 -> 5.71), session 31.
func (g *gen) pipeLoop(label string, i, n reg.Register, first func(ahead int)) {
	c, cur := g.c, *g.scratch
	g.spills, g.carried = 0, nil
	first(0)
	second, carried := g.second, g.carried
	last := c.GP64()
	c.MOVQ(n, last)
	c.SUBQ(operand.U32(g.l.Block), last) // the last block's index
	c.CMPQ(i, last)
	c.JAE(operand.LabelRef(label + "last"))
	c.Label(label + "body")
	*g.scratch, g.spills, g.carried = g.other, 0, nil
	first(g.l.Block)
	*g.scratch, g.second = cur, nil // the same second phases as before the loop
	for _, f := range second {
		f()
	}
	for j, r := range g.carried { // the next block's, where second reads them
		c.VMOVDQU(r, carried[j])
	}
	c.XCHGQ(cur.Base, g.other.Base)
	c.ADDQ(operand.U32(g.l.Block), i)
	c.CMPQ(i, last)
	c.JB(operand.LabelRef(label + "body"))
	c.Label(label + "last")
	for _, f := range second {
		f()
	}
	c.ADDQ(operand.U32(g.l.Block), i)
}

// scratchSlots is the number of 32-byte slots of the scratch buffer: 4
// spills a body, 4 bodies a block (see later).
const scratchSlots = 16

// scratchBuffer allocates the scratch buffer (see gen.scratch) in the
// function's frame, once, and points a register at it (emitted where it is
// called: in a kernel's emit, before the loop).
func (g *gen) scratchBuffer() {
	if g.scratch != nil {
		return
	}
	c := g.c
	p, halves := c.GP64(), map[bool]int{false: 1, true: 2}[g.pipe]
	c.LEAQ(c.AllocLocal(32*scratchSlots*halves+32), p)
	c.ADDQ(operand.U32(31), p)
	c.ANDQ(operand.I32(-32), p)
	g.scratch = &operand.Mem{Base: p}
	if g.pipe {
		g.other = operand.Mem{Base: c.GP64()}
		c.LEAQ(shifted(*g.scratch, 32*scratchSlots), g.other.Base)
	}
}

// spill stores v to the next slot of the scratch buffer and returns the
// slot.
func (g *gen) spill(v reg.VecVirtual) operand.Mem {
	m := shifted(*g.scratch, 32*(g.spills%scratchSlots))
	g.spills++
	g.store(v, m)
	return m
}
