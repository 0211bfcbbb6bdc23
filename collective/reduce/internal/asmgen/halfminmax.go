package asmgen

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// halfMinMax returns the Min or Max kernel of bfloat16 (bf) or float16 on
// 16-bit integers, with no conversion: both are sign and magnitude, so
// where at most one of x and y is negative their order as floats is their
// order as int16 (-0 below +0, as Go's min and max have it), and where
// both are negative it is the reverse. The minimum is VPMINSW, replaced by
// VPMAXSW in the lanes where x&y has its sign bit set (the maximum the
// other way round). Without NaNs the portable kernel's result is an input
// (or, for min(-0, +0), -0), whose bits widening and rounding keep, so the
// integer result is the portable one bit for bit. A vector where a or b
// holds a NaN (magnitude above the infinity's, lim) goes out of line to
// the conversion kernel, which follows Go's NaN rules.
func halfMinMax(bf, isMax bool) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		c := g.c
		op := opMin
		if isMax {
			op = opMax
		}
		var slow func(d, a, b operand.Mem)
		var inf uint32 = 0x7c00
		if bf {
			inf, slow = 0x7f80, bfloat16Exact(g, op)
		} else {
			f16c, half := float16F16C(g, op), g.l.Width/2
			slow = func(d, a, b operand.Mem) {
				f16c(d, a, b)
				f16c(shifted(d, half), shifted(a, half), shifted(b, half))
			}
		}
		first, second := c.VPMINSW, c.VPMAXSW
		if isMax {
			first, second = second, first
		}
		if g.wide() {
			return g.l.Width, halfMinMaxBlock(g, inf, first, second, slow)
		}
		mag, lim := g.bcast32(0x7fff7fff), g.bcast32(inf*0x10001)
		return g.l.Width, func(d, a, b operand.Mem) {
			x, y := g.load(a), g.load(b)
			// max(|x|, |y|) > inf, signed (magnitudes are below 0x8000)
			m := g.to(c.VPMAXSW, g.and(y, mag), g.and(x, mag))
			isNaN := g.to(c.VPCMPGTW, lim, m)
			c.VPTEST(isNaN, isNaN)
			nan, done := g.label("nan"), g.label("done")
			c.JNE(operand.LabelRef(nan))
			neg := g.to(c.VPSRAW, operand.U8(15), g.and(y, x)) // both negative
			r := g.to(ins4(c.VPBLENDVB), neg, g.to(second, y, x), g.to(first, y, x))
			g.store(r, d)
			c.Label(done)
			g.tail = append(g.tail, func() {
				c.Label(nan)
				slow(d, a, b)
				c.JMP(operand.LabelRef(done))
			})
		}
	}
}

// halfMinMaxBlock is halfMinMax's AVX-512 body. The NaN test runs once a
// block: x+x drops the sign, so a NaN's is above inf+inf, unsigned; the
// unsigned maximum of x+x and y+y over the block's vectors (a tree of
// VPMAXUW) is compared once, and the stores wait for that test, so the
// out-of-line path redoes the block from memory (dst may be exactly a or
// b). Mask-register compares cost two ALU operations' time on AMD Zen 5,
// so this does one a block instead of two a vector.
func halfMinMaxBlock(g *gen, inf uint32, first, second ins, slow func(d, a, b operand.Mem)) func(d, a, b operand.Mem) {
	c := g.c
	lim := g.bcast32((inf << 1) * 0x10001)
	type pending struct {
		out     reg.VecVirtual
		d, a, b operand.Mem
	}
	var block []pending
	var top []reg.VecVirtual
	g.blockEnd = func() {
		for len(top) > 1 {
			var next []reg.VecVirtual
			for i := 0; i+1 < len(top); i += 2 {
				next = append(next, g.to(c.VPMAXUW, top[i+1], top[i]))
			}
			if len(top)%2 == 1 {
				next = append(next, top[len(top)-1])
			}
			top = next
		}
		k := c.K()
		c.VPCMPUW(operand.U8(6), lim, top[0], k) // > lim: a NaN
		c.KORTESTD(k, k)
		nan, done := g.label("nan"), g.label("done")
		c.JNE(operand.LabelRef(nan))
		for _, p := range block {
			g.store(p.out, p.d)
		}
		c.Label(done)
		redo := block
		g.tail = append(g.tail, func() {
			c.Label(nan)
			for _, p := range redo {
				slow(p.d, p.a, p.b)
			}
			c.JMP(operand.LabelRef(done))
		})
		block, top = nil, nil
	}
	return func(d, a, b operand.Mem) {
		x, y := g.load(a), g.load(b)
		top = append(top, g.to(c.VPMAXUW, g.to(c.VPADDW, y, y), g.to(c.VPADDW, x, x)))
		neg := c.K()
		c.VPMOVW2M(g.and(y, x), neg) // both negative
		r := g.to(first, y, x)
		second(y, x, neg, r) // merge where both are negative
		block = append(block, pending{r, d, a, b})
	}
}

// bfloat16Exact sets up and returns the bfloat16 body for one vector
// without a fast path: widen, op in float32, round with NaN handling
// (roundBF16.emit), blend back.
func bfloat16Exact(g *gen, op floatOp) func(d, a, b operand.Mem) {
	k := newBF16Kernel(g, op)
	return func(d, a, b operand.Mem) {
		xe, xo, ye, yo := k.widen(a, b)
		te := k.r.emit(g, g.apply32(op, k.sign, xe, ye))
		to := k.r.emit(g, g.apply32(op, k.sign, xo, yo))
		k.combine(d, te, to)
	}
}
