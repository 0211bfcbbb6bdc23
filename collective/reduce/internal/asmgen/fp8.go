package asmgen

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// constant returns a read-only global of the given little-endian quads,
// made once per generated file.
func (g *gen) constant(name string, quads []uint64) operand.Mem {
	made := constants[g.c]
	if made == nil {
		made = map[string]operand.Mem{}
		constants[g.c] = made
	}
	if m, ok := made[name]; ok {
		return m
	}
	m := g.c.StaticGlobal(name)
	g.c.DataAttributes(attr.RODATA | attr.NOPTR)
	for j, q := range quads {
		g.c.AddDatum(8*j, operand.U64(q))
	}
	made[name] = m
	return m
}

// constants holds the globals made so far, per build context.
var constants = map[*build.Context]map[string]operand.Mem{}

// fp8MinMax lists the fp8 minimums and maximums (float8MinMax) of both
// levels.
var fp8MinMax = []kernel{
	{"minFloat8E4M3", "Min", []string{"Float8E4M3Type"}, float8MinMax(true, false), true},
	{"maxFloat8E4M3", "Max", []string{"Float8E4M3Type"}, float8MinMax(true, true), true},
	{"minFloat8E5M2", "Min", []string{"Float8E5M2Type"}, float8MinMax(false, false), true},
	{"maxFloat8E5M2", "Max", []string{"Float8E5M2Type"}, float8MinMax(false, true), true},
}

// fp8Float32 lists the AVX-512 fp8 sums and products through float32
// arithmetic without FP16 or GFNI (float8E4M3Float32, float8E5M2Float32).
var fp8Float32 = []kernel{
	{"sumFloat8E4M3", "Sum", []string{"Float8E4M3Type"}, float8E4M3Float32(opSum, false), true},
	{"prodFloat8E4M3", "Prod", []string{"Float8E4M3Type"}, float8E4M3ProdMagFloat32(false), true},
	{"sumFloat8E5M2", "Sum", []string{"Float8E5M2Type"}, float8E5M2Float32(opSum), true},
	{"prodFloat8E5M2", "Prod", []string{"Float8E5M2Type"}, float8E5M2Float32(opProd), true},
}

// levelKernels returns the kernels of level l: the common ones, the fp8
// Min and Max, and the fp8 Sum and Prod of AVX-512 (fp8Float32) or AVX2
// (fp8AVX2).
func levelKernels(l level) []kernel {
	ks := append(append([]kernel(nil), kernels...), fp8MinMax...)
	if l.Width == 64 {
		return append(ks, fp8Float32...)
	}
	return append(ks, fp8AVX2...)
}

// float8MinMax emits Go's min or max of the widened values, narrowed back,
// on bytes, a vector of elements per body. Without NaNs the result is
// one of the inputs (min(-0, +0) is -0, max +0), found by a signed byte
// min or max of keys ordered like the values: a byte with the sign bit
// has its magnitude bits flipped (x ^ 0x7f), so -0 is -1, below +0's 0.
// The same flip maps the key back. A block with a NaN lane (magnitude
// above 0x7e for E4M3, above 0x7c for E5M2) takes an out-of-line path that
// puts in those lanes what Go's min and max give for NaNs on amd64 (see
// fminOf): the float32 bits of x | y for min, and for max the same but
// with the sign bit of x & y; narrowed, the NaN pattern with that sign,
// and for E5M2 the payload bit after the quiet bit, which is the widened
// value's bit 21: the byte's lowest bit if its exponent field is not
// zero, else 0.
func float8MinMax(e4m3, isMax bool) emitter { return float8MinMaxWith(e4m3, isMax, false) }

// float8MinMaxGFNI is float8MinMax for CPUs with GFNI (the AVX-512 FP16
// level): the key is one GF2P8AFFINEQB, as x ^ (x>>7 ? 0x7f : 0) is
// linear over GF(2) (bit i of the key is bit i xor bit 7), where the
// AVX-512 form takes three uops (VPMOVB2M, VPXORD, VPBLENDMB); the key
// maps back by the same matrix.
func float8MinMaxGFNI(e4m3, isMax bool) emitter { return float8MinMaxWith(e4m3, isMax, true) }

// keyMatrix is the GF2P8AFFINEQB matrix of float8MinMaxGFNI's key: row i
// (byte 7-i) selects bits i and 7, row 7 bit 7.
func keyMatrix() uint64 {
	m := gfMatrix([8]int{0, 1, 2, 3, 4, 5, 6, 7})
	for i := range 7 {
		m |= 1 << 7 << (8 * (7 - i))
	}
	return m
}

func float8MinMaxWith(e4m3, isMax, gfni bool) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		c := g.c
		flip := g.bcast32(0x7f7f7f7f)
		limit := g.bcast32(0x7c7c7c7c)
		if e4m3 {
			limit = g.bcast32(0x7e7e7e7e)
		}
		if !g.wide() {
			return float8MinMaxAVX2(g, flip, limit, e4m3, isMax)
		}
		var keyM reg.VecVirtual
		if gfni {
			keyM = g.bcast64(keyMatrix())
		} else {
			// avo's register allocation fails for this body in
			// function's two loops (found, not analysed).
			g.streams = 1
		}
		key := func(v reg.VecVirtual) reg.VecVirtual {
			if gfni {
				return g.gf2p8affine(v, keyM, 0)
			}
			k := c.K()
			c.VPMOVB2M(v, k)
			out := g.vec()
			c.VPBLENDMB(g.xor(v, flip), v, k, out) // flipped where negative
			return out
		}
		isNaN := func(v reg.VecVirtual) reg.OpmaskVirtual {
			k := c.K()
			c.VPCMPUB(operand.U8(6), limit, g.and(v, flip), k) // magnitude > limit
			return k
		}
		// The NaN test: the keys of non-NaN bytes lie in [-1-limit, limit]
		// (signed), so the block is NaN-free if the smaller key of each
		// pair is at least -1-limit and the larger at most limit. One
		// chain of masked compares (opmask clean) runs over the block and
		// one KORTEST at its end branches to the blends out of line,
		// which redo the block's stores from registers (x, y and out stay
		// live until then, so dst may be exactly a or b).
		low := g.bcast32(0x83838383) // -1-0x7c = -125
		if e4m3 {
			low = g.bcast32(0x81818181) // -1-0x7e = -127
		}
		type stored struct {
			x, y, out reg.VecVirtual
			d         operand.Mem
		}
		var block []stored
		var clean reg.Register
		g.blockEnd = func() {
			slow, done := g.label("nan"), g.label("done")
			c.KORTESTQ(clean, clean)
			c.JCC(operand.LabelRef(slow)) // CF clear: not all bytes clean
			c.Label(done)
			stores := block
			g.tail = append(g.tail, func() {
				c.Label(slow)
				for _, st := range stores {
					nan := c.K()
					c.KORQ(isNaN(st.x), isNaN(st.y), nan)
					c.VMOVDQU8(float8NaNOf(g, st.x, st.y, flip, e4m3, isMax), nan, st.out)
					g.store(st.out, st.d)
				}
				c.JMP(operand.LabelRef(done))
			})
			block, clean = nil, nil
		}
		return g.l.Width, func(d, a, b operand.Mem) {
			x, y := g.load(a), g.load(b)
			kx, ky := key(x), key(y)
			lo, hi := g.to(c.VPMINSB, ky, kx), g.to(c.VPMAXSB, ky, kx)
			out := lo
			if isMax {
				out = hi
			}
			out = key(out)
			g.store(out, d)
			if clean == nil {
				clean = c.K()
				c.VPCMPB(operand.U8(5), low, lo, clean) // lo >= low
			} else {
				c.VPCMPB(operand.U8(5), low, lo, clean, clean)
			}
			c.VPCMPB(operand.U8(2), limit, hi, clean, clean) // hi <= limit
			block = append(block, stored{x, y, out, d})
		}
	}
}

// float8NaNOf returns what float8MinMax puts in NaN lanes of x and y (see
// its comment): sign | 0x7f, for E5M2 sign | 0x7e | payload.
func float8NaNOf(g *gen, x, y, flip reg.VecVirtual, e4m3, isMax bool) reg.VecVirtual {
	c := g.c
	v := float8NaNSign(g, x, y, flip, isMax)
	if !e4m3 {
		exp := g.bcast32(0x7c7c7c7c)
		kx, ky := c.K(), c.K()
		c.VPTESTMB(exp, x, kx)
		c.VPTESTMB(exp, y, ky)
		px, py := g.vec(), g.vec()
		c.VMOVDQU8_Z(x, kx, px)
		c.VMOVDQU8_Z(y, ky, py)
		low := g.and(g.or(px, py), g.bcast32(0x01010101))
		v = g.or(g.and(v, g.bcast32(0xfefefefe)), low) // sign | 0x7e | payload
	}
	return v
}

// float8NaNSign returns sign | 0x7f in every byte, the sign being that of
// x | y for min and of x & y for max (both levels).
func float8NaNSign(g *gen, x, y, flip reg.VecVirtual, isMax bool) reg.VecVirtual {
	var s reg.VecVirtual
	if isMax {
		s = g.and(x, y)
	} else {
		s = g.or(x, y)
	}
	return g.or(g.and(s, g.bcast32(0x80808080)), flip)
}

// float8MinMaxAVX2 is float8MinMax's body on AVX2: the keys by VPBLENDVB on
// each byte's own sign bit, NaN lanes by signed compares (magnitudes are
// below 0x80) and a VPBLENDVB.
func float8MinMaxAVX2(g *gen, flip, limit reg.VecVirtual, e4m3, isMax bool) (int, func(d, a, b operand.Mem)) {
	c := g.c
	key := func(v reg.VecVirtual) reg.VecVirtual {
		return g.to(ins4(c.VPBLENDVB), v, g.xor(v, flip), v) // flipped where negative
	}
	isNaN := func(v reg.VecVirtual) reg.VecVirtual {
		return g.to(c.VPCMPGTB, limit, g.and(v, flip)) // magnitude > limit
	}
	pick := c.VPMINSB
	if isMax {
		pick = c.VPMAXSB
	}
	return g.l.Width, func(d, a, b operand.Mem) {
		x, y := g.load(a), g.load(b)
		out := key(g.to(pick, key(y), key(x)))
		nan := g.or(isNaN(x), isNaN(y))
		g.storeUnless(nan, out, d, func() {
			v := float8NaNSign(g, x, y, flip, isMax) // sign | 0x7f
			if !e4m3 {
				exp, zero := g.bcast32(0x7c7c7c7c), g.vec()
				c.VPXOR(zero, zero, zero)
				// px, py: x and y where their exponent field is zero
				px := g.to(c.VPCMPEQB, zero, g.and(x, exp))
				py := g.to(c.VPCMPEQB, zero, g.and(y, exp))
				low := g.or(g.to(ins3(c.VPANDN), x, px), g.to(ins3(c.VPANDN), y, py))
				low = g.and(low, g.bcast32(0x01010101))
				v = g.or(g.and(v, g.bcast32(0xfefefefe)), low) // sign | 0x7e | payload
			}
			g.store(g.to(ins4(c.VPBLENDVB), nan, v, out), d)
		})
	}
}
