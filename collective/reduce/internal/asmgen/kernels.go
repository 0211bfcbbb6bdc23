package asmgen

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// emitter is kernel.emit.
type emitter = func(g *gen) (int, func(d, a, b operand.Mem))

// kernels lists every generated function. Sums and products of integers
// are the same bits signed or unsigned, so one function serves both.
var kernels = []kernel{
	{"sumFloat32", "Sum", []string{"Float32"}, binary(func(c *build.Context) ins { return c.VADDPS }), false},
	{"prodFloat32", "Prod", []string{"Float32"}, binary(func(c *build.Context) ins { return c.VMULPS }), false},
	{"minFloat32", "Min", []string{"Float32"}, floatMinMax(false, false), false},
	{"maxFloat32", "Max", []string{"Float32"}, floatMinMax(false, true), false},
	{"sumFloat64", "Sum", []string{"Float64"}, binary(func(c *build.Context) ins { return c.VADDPD }), false},
	{"prodFloat64", "Prod", []string{"Float64"}, binary(func(c *build.Context) ins { return c.VMULPD }), false},
	{"minFloat64", "Min", []string{"Float64"}, floatMinMax(true, false), false},
	{"maxFloat64", "Max", []string{"Float64"}, floatMinMax(true, true), false},

	{"sumInt8", "Sum", []string{"Int8", "Uint8"}, binary(func(c *build.Context) ins { return c.VPADDB }), false},
	{"prodInt8", "Prod", []string{"Int8", "Uint8"}, prodInt8, false},
	{"minInt8", "Min", []string{"Int8"}, binary(func(c *build.Context) ins { return c.VPMINSB }), false},
	{"maxInt8", "Max", []string{"Int8"}, binary(func(c *build.Context) ins { return c.VPMAXSB }), false},
	{"minUint8", "Min", []string{"Uint8"}, binary(func(c *build.Context) ins { return c.VPMINUB }), false},
	{"maxUint8", "Max", []string{"Uint8"}, binary(func(c *build.Context) ins { return c.VPMAXUB }), false},

	{"sumInt32", "Sum", []string{"Int32", "Uint32"}, binary(func(c *build.Context) ins { return c.VPADDD }), false},
	{"prodInt32", "Prod", []string{"Int32", "Uint32"}, binary(func(c *build.Context) ins { return c.VPMULLD }), false},
	{"minInt32", "Min", []string{"Int32"}, binary(func(c *build.Context) ins { return c.VPMINSD }), false},
	{"maxInt32", "Max", []string{"Int32"}, binary(func(c *build.Context) ins { return c.VPMAXSD }), false},
	{"minUint32", "Min", []string{"Uint32"}, binary(func(c *build.Context) ins { return c.VPMINUD }), false},
	{"maxUint32", "Max", []string{"Uint32"}, binary(func(c *build.Context) ins { return c.VPMAXUD }), false},

	{"sumInt64", "Sum", []string{"Int64", "Uint64"}, binary(func(c *build.Context) ins { return c.VPADDQ }), false},
	{"prodInt64", "Prod", []string{"Int64", "Uint64"}, prodInt64, false},
	{"minInt64", "Min", []string{"Int64"}, minMax64(false, false), false},
	{"maxInt64", "Max", []string{"Int64"}, minMax64(false, true), false},
	{"minUint64", "Min", []string{"Uint64"}, minMax64(true, false), false},
	{"maxUint64", "Max", []string{"Uint64"}, minMax64(true, true), false},

	{"sumBFloat16", "Sum", []string{"BFloat16Type"}, bfloat16(opSum), true},
	{"prodBFloat16", "Prod", []string{"BFloat16Type"}, bfloat16(opProd), true},
	{"minBFloat16", "Min", []string{"BFloat16Type"}, halfMinMax(true, false), true},
	{"maxBFloat16", "Max", []string{"BFloat16Type"}, halfMinMax(true, true), true},
	{"sumFloat16", "Sum", []string{"Float16Type"}, float16(opSum), true},
	{"prodFloat16", "Prod", []string{"Float16Type"}, float16(opProd), true},
	{"minFloat16", "Min", []string{"Float16Type"}, halfMinMax(false, false), true},
	{"maxFloat16", "Max", []string{"Float16Type"}, halfMinMax(false, true), true},
}

// extension is a set of AVX-512 kernels that need one more CPU feature;
// the generated table lists them as avx512<id>Kernels, and package reduce
// makes levels of the avx512 kernels with these in place of theirs.
type extension struct {
	Name    string // after AVX512 in the function names
	id      string // after avx512 in the table's names
	kernels []kernel
}

var extensions = []extension{
	{"FP16", "fp16", []kernel{
		{"sumFloat16", "Sum", []string{"Float16Type"}, float16Native(opSum), true},
		{"prodFloat16", "Prod", []string{"Float16Type"}, float16Native(opProd), true},
		{"minFloat16", "Min", []string{"Float16Type"}, float16Native(opMin), true},
		{"maxFloat16", "Max", []string{"Float16Type"}, float16Native(opMax), true},
		{"sumFloat8E4M3", "Sum", []string{"Float8E4M3Type"}, float8E4M3SumWords(), true},
		{"prodFloat8E4M3", "Prod", []string{"Float8E4M3Type"}, float8E4M3ProdMag(), true},
		{"sumFloat8E5M2", "Sum", []string{"Float8E5M2Type"}, float8E5M2Native(opSum), true},
		{"prodFloat8E5M2", "Prod", []string{"Float8E5M2Type"}, float8E5M2Native(opProd), true},
		{"minFloat8E4M3", "Min", []string{"Float8E4M3Type"}, float8MinMaxGFNI(true, false), true},
		{"maxFloat8E4M3", "Max", []string{"Float8E4M3Type"}, float8MinMaxGFNI(true, true), true},
		{"minFloat8E5M2", "Min", []string{"Float8E5M2Type"}, float8MinMaxGFNI(false, false), true},
		{"maxFloat8E5M2", "Max", []string{"Float8E5M2Type"}, float8MinMaxGFNI(false, true), true},
	}},
	// AVX-512 with GFNI but no FP16 (AMD Zen 4 and 5, Intel's servers
	// from Ice Lake without FP16): the FP16 level's E4M3 sum and product
	// with float32 arithmetic (the avx512 level's with its bit moves by
	// GF2P8AFFINEQB), and its fp8 minimums and maximums.
	{"GFNI", "gfni", []kernel{
		{"sumFloat8E4M3", "Sum", []string{"Float8E4M3Type"}, float8E4M3Float32(opSum, true), true},
		{"prodFloat8E4M3", "Prod", []string{"Float8E4M3Type"}, float8E4M3ProdMagFloat32(true), true},
		{"minFloat8E4M3", "Min", []string{"Float8E4M3Type"}, float8MinMaxGFNI(true, false), true},
		{"maxFloat8E4M3", "Max", []string{"Float8E4M3Type"}, float8MinMaxGFNI(true, true), true},
		{"minFloat8E5M2", "Min", []string{"Float8E5M2Type"}, float8MinMaxGFNI(false, false), true},
		{"maxFloat8E5M2", "Max", []string{"Float8E5M2Type"}, float8MinMaxGFNI(false, true), true},
	}},
}

// fminOf emits Go's min(x, y) for floats exactly as the Go compiler lowers
// it on amd64 (cmd/compile AMD64.rules), so NaN and -0 come out the same
// bits: t1 = MIN(x, y); t2 = MIN(t1, x); r = t1 | t2, where MIN(p, q) is
// p < q ? p : q (q when either is NaN or both are zero). t2 fixes x NaN,
// the OR fixes min(-0, +0).
func (g *gen) fminOf(double bool, x reg.VecVirtual, y operand.Op) reg.VecVirtual {
	min := g.c.VMINPS
	if double {
		min = g.c.VMINPD
	}
	return g.fminWith(min, x, y)
}

// fminWith is fminOf with min as MIN, for any float format.
func (g *gen) fminWith(min ins, x reg.VecVirtual, y operand.Op) reg.VecVirtual {
	t1 := g.to(min, y, x)
	t2 := g.to(min, x, t1)
	return g.or(t1, t2)
}

// fmaxOf is Go's max(x, y) as the compiler lowers it: -min(-x, -y), the
// negations XOR with the sign bit (sign holds it in every lane). On
// AVX-512 the same bits in three instructions: MIN(-p, -q) is -MAX(p, q)
// bit for bit (MAX(p, q) = p > q ? p : q, q when either is NaN or both
// are zero), so with M1 = MAX(x, y) and M2 = MAX(M1, x) the result is
// -(-M1 | -M2): the sign bit of M1 & M2, the other bits of M1 | M2, one
// VPTERNLOG.
func (g *gen) fmaxOf(double bool, sign, x reg.VecVirtual, y operand.Op) reg.VecVirtual {
	if g.wide() {
		max, tern := g.c.VMAXPS, g.c.VPTERNLOGD
		if double {
			max, tern = g.c.VMAXPD, g.c.VPTERNLOGQ
		}
		return g.fmaxWide(max, tern, sign, x, y)
	}
	nx := g.xor(x, sign)
	ny := g.xor(y, sign)
	return g.xor(g.fminOf(double, nx, ny), sign)
}

// fmaxWide is fmaxOf's AVX-512 form with max as MAX, for any float
// format (sign holds the format's sign bits; tern is a VPTERNLOG, bitwise
// whatever its lane width).
func (g *gen) fmaxWide(max, tern ins, sign, x reg.VecVirtual, y operand.Op) reg.VecVirtual {
	m1 := g.to(max, y, x)
	m2 := g.to(max, x, m1)
	// m1 = sign ? m1&m2 : m1|m2, bit by bit; the truth table's index is
	// m1*4 + m2*2 + sign.
	tern(operand.U8(0xd4), sign, m2, m1)
	return m1
}

func (g *gen) signMask(double bool) reg.VecVirtual {
	if double {
		return g.bcast64(1 << 63)
	}
	return g.bcast32(1 << 31)
}

func floatMinMax(double, isMax bool) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		var sign reg.VecVirtual
		if isMax {
			sign = g.signMask(double)
		}
		return g.l.Width, func(d, a, b operand.Mem) {
			x := g.load(a)
			if isMax {
				g.store(g.fmaxOf(double, sign, x, b), d)
			} else {
				g.store(g.fminOf(double, x, b), d)
			}
		}
	}
}

// prodInt8 multiplies bytes through 16-bit multiplies, which keep the low
// 8 bits of each product exact: the even bytes from x*y (masked to the
// low byte), the odd ones from (x>>8) * (y & 0xff00), whose low byte is 0.
func prodInt8(g *gen) (int, func(d, a, b operand.Mem)) {
	low := g.bcast32(0x00ff00ff)
	high := g.bcast32(0xff00ff00)
	return g.l.Width, func(d, a, b operand.Mem) {
		x, y := g.load(a), g.load(b)
		even := g.and(g.to(g.c.VPMULLW, y, x), low)
		odd := g.to(g.c.VPMULLW, g.and(y, high), g.to(g.c.VPSRLW, operand.U8(8), x))
		g.store(g.or(even, odd), d)
	}
}

// prodInt64 is VPMULLQ on AVX-512; on AVX2 the low 64 bits of the product
// from 32-bit halves: lo(x)lo(y) + (hi(x)lo(y) + lo(x)hi(y)) << 32. At AVX2
// it runs two streams from streamMin up: at 64 MiB on AMD Zen 3 it read
// 10-14% below int64 Sum in one stream (it keeps fewer loads in flight),
// and two raised it 17-22% (session 30, bench/results/kern30.md); software
// prefetches instead made it slower.
func prodInt64(g *gen) (int, func(d, a, b operand.Mem)) {
	if g.wide() {
		return binary(func(c *build.Context) ins { return c.VPMULLQ })(g)
	}
	g.streams = 2 // see streamCount
	return g.l.Width, func(d, a, b operand.Mem) {
		c := g.c
		x, y := g.load(a), g.load(b)
		lo := g.to(c.VPMULUDQ, y, x)
		hx := g.to(c.VPMULUDQ, y, g.to(c.VPSRLQ, operand.U8(32), x))
		hy := g.to(c.VPMULUDQ, g.to(c.VPSRLQ, operand.U8(32), y), x)
		cross := g.to(c.VPSLLQ, operand.U8(32), g.to(c.VPADDQ, hx, hy))
		g.store(g.to(c.VPADDQ, cross, lo), d)
	}
}

// minMax64 is VPMIN/VPMAX[SU]Q on AVX-512; AVX2 has only the signed
// compare VPCMPGTQ, so unsigned values are compared with their sign bits
// flipped, and the result is blended from the original inputs. At AVX2 the
// unsigned ones (two more XORs a vector) run two streams from streamMin
// up: at 64 MiB on AMD Zen 3 (bench/kernel_probe.sh, three sittings of
// 8-12 interleaved rounds, load 0.2-2.8, best / median GB/s) uint64 Max
// one stream 8.72 / 7.47, 8.12 / 6.80, 8.74 / 7.03 (0.79x C reduce in
// session 31's quiet window), two 9.98 / 8.16, 8.66 / 7.22, 9.69 / 7.89;
// uint64 Min 8.82 -> 10.31, 8.36 -> 9.51, 8.73 -> 9.73 (best); int64 Sum,
// the same code in both arms, moved -8..+7 %. int64 Max with two streams
// read +17, -12 and -2 % (best), so the signed ones keep one.
func minMax64(unsigned, isMax bool) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		c := g.c
		if g.wide() {
			op := map[[2]bool]ins{
				{false, false}: c.VPMINSQ, {false, true}: c.VPMAXSQ,
				{true, false}: c.VPMINUQ, {true, true}: c.VPMAXUQ,
			}[[2]bool{unsigned, isMax}]
			return binary(func(*build.Context) ins { return op })(g)
		}
		var sign reg.VecVirtual
		if unsigned {
			g.streams = 2 // see streamCount and above
			sign = g.bcast64(1 << 63)
		}
		return g.l.Width, func(d, a, b operand.Mem) {
			x, y := g.load(a), g.load(b)
			cx, cy := x, y
			if unsigned {
				cx, cy = g.xor(x, sign), g.xor(y, sign)
			}
			gt := g.to(c.VPCMPGTQ, cy, cx) // x > y
			if isMax {
				g.store(g.to(ins4(c.VPBLENDVB), gt, x, y), d) // gt ? x : y
			} else {
				g.store(g.to(ins4(c.VPBLENDVB), gt, y, x), d) // gt ? y : x
			}
		}
	}
}
