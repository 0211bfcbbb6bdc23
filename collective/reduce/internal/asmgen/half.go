package asmgen

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The 16-bit float kernels do what the portable ones do: widen both inputs
// to float32 exactly, combine there with the float32 kernels' instructions,
// and round once to nearest even.

type floatOp int

const (
	opSum floatOp = iota
	opProd
	opMin
	opMax
)

// apply32 emits x op y over float32 lanes (sign: the sign mask, for max).
// x is the first source of a sum or product, whose NaN the instruction
// returns when both are NaN, as the portable kernels do (firstNaN in
// package reduce).
func (g *gen) apply32(op floatOp, sign, x, y reg.VecVirtual) reg.VecVirtual {
	switch op {
	case opSum:
		return g.to(g.c.VADDPS, y, x)
	case opProd:
		return g.to(g.c.VMULPS, y, x)
	case opMin:
		return g.fminOf(false, x, y)
	}
	return g.fmaxOf(false, sign, x, y)
}

// bfloat16 kernels work on 32-bit lanes, each holding two elements: the
// even element widens to lane<<16 and the odd one to lane&0xffff0000, so
// no shuffle is needed. Each float32 result is rounded with integer
// arithmetic exactly as dtype.BFloat16FromFloat32 does (VCVTNEPS2BF16 is
// not used: it flushes subnormals), and the two rounded halves are blended
// back into one lane. A min or max is one of the widened inputs or the OR
// of two, whose low 16 bits are zero: rounding leaves it as it is, so only
// NaNs need their quiet bit.
//
// At AVX2 a sum or product takes no NaN test (see bfloat16PairAVX2).
// The AVX-512 bodies keep theirs: session 27's machine, without AVX-512,
// could not test a change there.
func bfloat16(op floatOp) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		c := g.c
		k := newBF16Kernel(g, op)
		if !g.wide() && (op == opSum || op == opProd) {
			if op == opProd {
				g.streams = 1 // two lost 2-4% at 64 MiB (see streamCount)
			}
			return bfloat16PairAVX2(g, op, k)
		}
		return g.l.Width, func(d, a, b operand.Mem) {
			xe, xo, ye, yo := k.widen(a, b)
			re, ro := g.apply32(op, k.sign, xe, ye), g.apply32(op, k.sign, xo, yo)
			// One test for a NaN in either half (one compare: unordered
			// is true where either operand is a NaN); the NaN handling
			// is out of line.
			if g.wide() {
				nk := c.K()
				c.VCMPPS(operand.U8(3), ro, re, nk)
				c.KORTESTW(nk, nk)
			} else {
				nan := g.to(c.VCMPPS, operand.U8(3), ro, re)
				c.VPTEST(nan, nan)
			}
			slow, done := g.label("nan"), g.label("done")
			c.JNE(operand.LabelRef(slow))
			k.combine(d, k.r.round(g, re), k.r.round(g, ro))
			c.Label(done)
			g.tail = append(g.tail, func() {
				c.Label(slow)
				k.combine(d, k.r.emit(g, re), k.r.emit(g, ro))
				c.JMP(operand.LabelRef(done))
			})
		}
	}
}

// bf16Kernel holds the constants of a bfloat16 kernel's body: the upper
// half mask, the rounding (r), the sign mask (max only) and, at AVX-512,
// the odd words' blend mask.
type bf16Kernel struct {
	g    *gen
	hi   reg.VecVirtual
	sign reg.VecVirtual
	odd  reg.OpmaskVirtual
	r    roundBF16
}

// newBF16Kernel sets up the constants of a bfloat16 kernel of op.
func newBF16Kernel(g *gen, op floatOp) bf16Kernel {
	c := g.c
	k := bf16Kernel{g: g, hi: g.bcast32(0xffff0000)}
	k.r = roundBF16{quiet: g.bcast32(0x00400000), exact: op == opMin || op == opMax}
	if !k.r.exact {
		k.r.bias = g.bcast32(0x7fff)
		if g.wide() {
			k.r.lsb = g.bcast32(0x10000)
		}
		k.r.one = g.bcast32(1)
	}
	if op == opMax {
		k.sign = g.signMask(false)
	}
	if g.wide() {
		m := c.GP32()
		c.MOVL(operand.U32(0xaaaaaaaa), m)
		k.odd = c.K()
		c.KMOVD(m, k.odd)
	}
	return k
}

// widen returns a's and b's even elements (lane<<16) and odd ones
// (lane&0xffff0000) as float32 lanes.
func (k bf16Kernel) widen(a, b operand.Mem) (xe, xo, ye, yo reg.VecVirtual) {
	g, c := k.g, k.g.c
	if g.wide() { // EVEX shifts take a memory source
		xe, xo = g.to(c.VPSLLD, operand.U8(16), a), g.and(a, k.hi)
		ye, yo = g.to(c.VPSLLD, operand.U8(16), b), g.and(b, k.hi)
		return xe, xo, ye, yo
	}
	x, y := g.load(a), g.load(b)
	xe, xo = g.to(c.VPSLLD, operand.U8(16), x), g.and(x, k.hi)
	ye, yo = g.to(c.VPSLLD, operand.U8(16), y), g.and(y, k.hi)
	return xe, xo, ye, yo
}

// combine blends the rounded even (te) and odd (to) results back into
// 16-bit elements and stores them at d.
func (k bf16Kernel) combine(d operand.Mem, te, to reg.VecVirtual) {
	g, c := k.g, k.g.c
	even := g.to(c.VPSRLD, operand.U8(16), te)
	out := g.vec()
	if g.wide() {
		c.VPBLENDMW(to, even, k.odd, out) // odd words from to
	} else {
		c.VPBLENDW(operand.U8(0xaa), to, even, out)
	}
	g.store(out, d)
}

// bfloat16PairAVX2 returns the AVX2 sum and product body, which takes two
// vectors of each input (64 bytes) and emits each of its instructions for
// both before the next: the two chains interleaved.
//
// No NaN test: the NaN of a sum or product is an operand's quieted
// (VADDPS and VMULPS return the first NaN source, as the portable
// kernel's firstNaN does) or the default NaN, both with zero low 16 bits,
// which the rounding keeps (0x7fff + 1 does not carry), and quiet, as
// dtype.BFloat16FromFloat32 makes them. On AMD Zen 3 dropping the test
// (VCMPPS, VPTEST, a branch a vector) took the sum and product from 17.4
// to 19.1 GB/s at 256 KiB (session 27).
//
// The inputs are read as memory operands, the even elements widened by
// VPMULLD by 0x10000 (lane<<16), the odd ones by VPAND: in a loop from L1
// on AMD Zen 3 the one-vector body with loads and VPSLLD ran at 4.8
// cycles a vector (best) for 15 vector instructions, which independent
// copies of the same instructions issue in 3.9; with memory operands and
// two vectors interleaved, 4.4 (bench/results/kernels_fp8.md, session
// 28; the shifts' pipes were not the limit: VPMULLD in their place alone
// gained nothing).
func bfloat16PairAVX2(g *gen, op floatOp, k bf16Kernel) (int, func(d, a, b operand.Mem)) {
	c := g.c
	up := g.bcast32(0x00010000)
	one16, lim := g.bcast32(0x00010001), g.bcast32(0x80018001)
	two := func(m operand.Mem) []operand.Mem { return []operand.Mem{m, shifted(m, g.l.Width)} }
	even := func(m operand.Mem) reg.VecVirtual { return g.to(c.VPMULLD, m, up) }
	odd := func(m operand.Mem) reg.VecVirtual { return g.and(m, k.hi) }
	apply := func(x, y reg.VecVirtual) reg.VecVirtual { return g.apply32(op, k.sign, x, y) }
	return 2 * g.l.Width, func(d, a, b operand.Mem) {
		xe, xo := eachMem(even, two(a)), eachMem(odd, two(a))
		ye, yo := eachMem(even, two(b)), eachMem(odd, two(b))
		out := k.roundWords(pairwise(apply, xe, ye), pairwise(apply, xo, yo), one16, lim)
		for i, m := range two(d) {
			g.store(out[i], m)
		}
	}
}

// eachMem, each and pairwise return f of each element (of each pair of
// elements), emitted in order: one instruction for every vector of a
// multi-vector body before the next.
func eachMem(f func(operand.Mem) reg.VecVirtual, ms []operand.Mem) []reg.VecVirtual {
	r := make([]reg.VecVirtual, len(ms))
	for i, m := range ms {
		r[i] = f(m)
	}
	return r
}

func each(f func(reg.VecVirtual) reg.VecVirtual, xs []reg.VecVirtual) []reg.VecVirtual {
	r := make([]reg.VecVirtual, len(xs))
	for i, x := range xs {
		r[i] = f(x)
	}
	return r
}

func pairwise(f func(x, y reg.VecVirtual) reg.VecVirtual, x, y []reg.VecVirtual) []reg.VecVirtual {
	r := make([]reg.VecVirtual, len(x))
	for i := range x {
		r[i] = f(x[i], y[i])
	}
	return r
}

// roundWords is combine(round(te[i]), round(to[i])) for each i, for
// NaN-free or NaN-exact results (a NaN with zero low 16 bits) at AVX2, in
// 16-bit words (each instruction emitted for every i before the next):
// the words U of the results' upper halves (the truncated bfloat16s) and
// L of their lower halves, each by one shift and one VPBLENDW, and U + 1
// where L | U&1 > 0x8000 unsigned (VPMAXUW with 0x8001 and VPCMPEQW: L
// above half, or at half with U odd), which is round's v + 0x7fff +
// (v>>16 & 1). 9 instructions a vector against 10, 2 of them shifts
// against 3. one16 and lim hold 0x0001 and 0x8001 in every word.
func (k bf16Kernel) roundWords(te, to []reg.VecVirtual, one16, lim reg.VecVirtual) []reg.VecVirtual {
	g, c := k.g, k.g.c
	blend := func(odd, even reg.VecVirtual) reg.VecVirtual {
		return g.to(ins4(c.VPBLENDW), operand.U8(0xaa), odd, even)
	}
	shr := func(v reg.VecVirtual) reg.VecVirtual { return g.to(c.VPSRLD, operand.U8(16), v) }
	shl := func(v reg.VecVirtual) reg.VecVirtual { return g.to(c.VPSLLD, operand.U8(16), v) }
	u := pairwise(blend, to, each(shr, te))
	l := pairwise(blend, each(shl, to), te)
	lsb := each(func(u reg.VecVirtual) reg.VecVirtual { return g.and(u, one16) }, u)
	t := pairwise(func(l, b reg.VecVirtual) reg.VecVirtual { return g.or(l, b) }, l, lsb)
	m := each(func(t reg.VecVirtual) reg.VecVirtual { return g.to(c.VPMAXUW, lim, t) }, t)
	carry := pairwise(func(t, m reg.VecVirtual) reg.VecVirtual { return g.to(c.VPCMPEQW, t, m) }, t, m) // all ones where t >= 0x8001
	return pairwise(func(carry, u reg.VecVirtual) reg.VecVirtual { return g.to(c.VPSUBW, carry, u) }, carry, u)
}

// roundBF16 holds the constants of its emit; exact says the values are
// bfloat16 already (only NaNs change).
type roundBF16 struct {
	one, lsb, bias, quiet reg.VecVirtual
	exact                 bool
}

// emit returns float32 lanes v rounded to bfloat16 in their upper 16 bits
// (the lower bits are garbage): v + 0x7fff + (v>>16 & 1), a carry moving
// into the exponent up to Inf; a NaN instead becomes v | 0x400000, quiet
// with v's sign and leading payload bits.
func (r roundBF16) emit(g *gen, v reg.VecVirtual) reg.VecVirtual {
	c := g.c
	t := v
	if !r.exact {
		t = r.round(g, v)
	}
	if g.wide() {
		nan := c.K()
		c.VCMPPS(operand.U8(3), v, v, nan) // unordered: v is NaN
		c.VPORD(r.quiet, v, nan, t)        // merge: t = v | quiet where NaN
		return t
	}
	nan := g.to(c.VCMPPS, operand.U8(3), v, v)
	return g.to(ins4(c.VPBLENDVB), nan, g.or(v, r.quiet), t)
}

// round is emit for v without NaNs: v + 0x7fff + (v>>16 & 1) in a new
// register (v itself when exact).
func (r roundBF16) round(g *gen, v reg.VecVirtual) reg.VecVirtual {
	c := g.c
	if r.exact {
		return v
	}
	if g.wide() {
		odd := c.K()
		c.VPTESTMD(r.lsb, v, odd) // the kept part's lowest bit is 1
		t := g.to(c.VPADDD, r.bias, v)
		c.VPADDD(r.one, t, odd, t) // merge: +1 where odd
		return t
	}
	lsb := g.and(g.to(c.VPSRLD, operand.U8(16), v), r.one)
	return g.to(c.VPADDD, r.bias, g.to(c.VPADDD, lsb, v))
}

// float16 kernels convert with F16C: VCVTPH2PS is exact (subnormals and
// NaN payloads included; it quiets a signaling NaN, which the rounding
// back quiets anyway), VCVTPS2PH with immediate 0 rounds to nearest even
// like dtype.Float16FromFloat32, subnormals included.
func float16(op floatOp) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		return g.l.Width / 2, float16F16C(g, op)
	}
}

// float16F16C sets up and returns the F16C body for 32 bytes.
func float16F16C(g *gen, op floatOp) func(d, a, b operand.Mem) {
	c := g.c
	var sign reg.VecVirtual
	if op == opMax {
		sign = g.signMask(false)
	}
	return func(d, a, b operand.Mem) {
		x, y := g.vec(), g.vec()
		c.VCVTPH2PS(a, x)
		c.VCVTPH2PS(b, y)
		if g.wide() {
			c.VCVTPS2PH(operand.U8(0), g.apply32(op, sign, x, y), d)
			return
		}
		// At AVX2 into a register, then stored: VCVTPS2PH to memory
		// takes two cycles on AMD Zen 3, into a register one
		// (bench/uops_probe.sh ISA=avx2 cvt); float16 sum 22.7 -> 25.2
		// GB/s, product 23.6 -> 27.8 at 256 KiB (session 27).
		h := c.XMM()
		c.VCVTPS2PH(operand.U8(0), g.apply32(op, sign, x, y), h)
		c.VMOVDQU(h, d)
	}
}

// float16Native is the AVX-512 FP16 kernel. VADDPH and VMULPH round the
// exact sum or product once to nearest even, subnormals kept (Go runs
// with DAZ and FTZ off, and FP16 arithmetic ignores both in any case),
// which is what the portable kernel's
// exact-or-innocuously-rounded float32 result rounded again gives; a NaN
// result is the first NaN operand quieted, or the default NaN 0xfe00 (the
// portable float32 default NaN narrowed), as firstNaN does. VMINPH and
// VMAXPH select like VMINPS and VMAXPS, so Go's min and max take the same
// instructions as for float32 (fminOf, fmaxOf) on the float16 lanes; the
// results are inputs (or the OR of two zeros) with the same bits, except
// where a NaN is involved: there Go ORs the NaN with the other operand's
// float32 bits, which differ from its float16 bits for a subnormal, and the
// NaN must be quieted, so a vector with a NaN in a or b (VCMPPH unordered)
// takes the F16C path out of line.
func float16Native(op floatOp) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		c := g.c
		if op == opSum || op == opProd {
			e := vaddph
			if op == opProd {
				e = vmulph
			}
			return g.l.Width, func(d, a, b operand.Mem) {
				g.store(g.to(g.rawTo(e), b, g.load(a)), d)
			}
		}
		f16c := float16F16C(g, op)
		var sign reg.VecVirtual
		if op == opMax {
			sign = g.bcast32(0x80008000)
		}
		return g.l.Width, func(d, a, b operand.Mem) {
			x := g.load(a)
			k := c.K()
			g.raw(vcmpph, operand.U8(3), b, x, k) // unordered
			c.KORTESTD(k, k)
			slow, done := g.label("nan"), g.label("done")
			c.JNE(operand.LabelRef(slow))
			if op == opMin {
				g.store(g.fminWith(g.rawTo(vminph), x, b), d)
			} else {
				g.store(g.fmaxWide(g.rawTo(vmaxph), c.VPTERNLOGD, sign, x, b), d)
			}
			c.Label(done)
			g.tail = append(g.tail, func() {
				c.Label(slow)
				half := g.l.Width / 2
				f16c(d, a, b)
				f16c(shifted(d, half), shifted(a, half), shifted(b, half))
				c.JMP(operand.LabelRef(done))
			})
		}
	}
}

func shifted(m operand.Mem, by int) operand.Mem {
	m.Disp += by
	return m
}
