package asmgen

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The fp8 kernels look results up in the portable kernels' table of all
// 256x256 input pairs (package reduce, pairTable): for each element the
// dword index a<<8|b, a VPGATHERDD of 4 bytes at table+index (the table
// is padded by 3 bytes), and the low byte of each dword stored. The
// results are the table's, so the portable kernels' bit for bit.

// tableKernels lists the fp8 functions: op and the dtype constants.
var tableKernels = []struct{ op, t string }{
	{"Sum", "Float8E4M3Type"}, {"Prod", "Float8E4M3Type"}, {"Min", "Float8E4M3Type"}, {"Max", "Float8E4M3Type"},
	{"Sum", "Float8E5M2Type"}, {"Prod", "Float8E5M2Type"}, {"Min", "Float8E5M2Type"}, {"Max", "Float8E5M2Type"},
}

// tableName is the function name of kernel k at level l.
func tableName(op, t string, l level) string {
	return fmt.Sprintf("lookup%s%s%s", op, t[:len(t)-len("Type")], l.Name)
}

// tableFunction emits one fp8 kernel: func(dst, a, b *byte, n int, tab
// *byte), n a positive multiple of the block.
func (g *gen) tableFunction(op, t string) {
	c := g.c
	name := tableName(op, t, g.l)
	c.Function(name)
	c.Attributes(attr.NOSPLIT)
	c.SignatureExpr("func(dst, a, b *byte, n int, tab *byte)")
	c.Pragma("noescape")
	c.Doc(fmt.Sprintf("%s computes dst = a %s b (%s) over n bytes, n a positive multiple of %d, by lookups in tab, the table of all pairs.",
		name, op, t, g.l.Block))
	dst := c.Load(c.Param("dst"), c.GP64())
	a := c.Load(c.Param("a"), c.GP64())
	b := c.Load(c.Param("b"), c.GP64())
	n := c.Load(c.Param("n"), c.GP64())
	tab := c.Load(c.Param("tab"), c.GP64())
	step := g.l.Width / 4 // elements (bytes) per gather
	var shuf, perm reg.VecVirtual
	if !g.wide() {
		// Bytes 0, 4, 8, 12 of each 128-bit lane to its first dword,
		// then dwords 0 and 4 to the low 8 bytes.
		shuf = g.vec()
		c.VMOVDQU(g.constant(fmt.Sprintf("fp8shuf%s", g.l.Name), []uint64{0x808080800c080400, 0x8080808080808080, 0x808080800c080400, 0x8080808080808080}), shuf)
		perm = g.vec()
		c.VMOVDQU(g.constant(fmt.Sprintf("fp8perm%s", g.l.Name), []uint64{4 << 32, 0, 0, 0}), perm)
	}
	var ones reg.GPVirtual
	if g.wide() {
		ones = c.GP32()
		c.MOVL(operand.U32(0xffff), ones)
	}
	i := c.GP64()
	c.XORQ(i, i)
	c.Label("loop")
	for off := 0; off < g.l.Block; off += step {
		at := func(base reg.Register) operand.Mem {
			return operand.Mem{Base: base, Index: i, Scale: 1, Disp: off}
		}
		x, y := g.vec(), g.vec()
		c.VPMOVZXBD(at(a), x)
		c.VPMOVZXBD(at(b), y)
		idx := g.or(g.to(c.VPSLLD, operand.U8(8), x), y)
		r := g.vec()
		if g.wide() {
			k := c.K() // the gather clears its mask
			c.KMOVW(ones, k)
			c.VPGATHERDD(operand.Mem{Base: tab, Index: idx, Scale: 1}, k, r)
			c.VPMOVDB(r, at(dst))
			continue
		}
		mask := g.to(c.VPCMPEQD, idx, idx) // all ones; the gather clears it
		c.VMOVDQA(idx, r)                  // any value: every lane is gathered
		c.VPGATHERDD(mask, operand.Mem{Base: tab, Index: idx, Scale: 1}, r)
		packed := g.to(c.VPERMD, g.to(c.VPSHUFB, shuf, r), perm)
		c.VMOVQ(packed.AsX(), at(dst))
	}
	c.ADDQ(operand.U32(g.l.Block), i)
	c.CMPQ(i, n)
	c.JB(operand.LabelRef("loop"))
	c.VZEROUPPER()
	c.RET()
}

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

// fp8Arith lists the AVX-512 fp8 sums and products, which compute instead
// of looking up (float8): they replace the table kernels of their (op,
// type) at that level. Min and Max stay on the table.
var fp8Arith = []kernel{
	{"sumFloat8E4M3", "Sum", []string{"Float8E4M3Type"}, float8(true, opSum), false},
	{"prodFloat8E4M3", "Prod", []string{"Float8E4M3Type"}, float8(true, opProd), false},
	{"sumFloat8E5M2", "Sum", []string{"Float8E5M2Type"}, float8(false, opSum), false},
	{"prodFloat8E5M2", "Prod", []string{"Float8E5M2Type"}, float8(false, opProd), false},
}

// levelKernels returns the kernels and table kernels of level l.
func levelKernels(l level) ([]kernel, []struct{ op, t string }) {
	if l.Width != 64 {
		return kernels, tableKernels
	}
	var tks []struct{ op, t string }
	for _, k := range tableKernels {
		if k.op != "Sum" && k.op != "Prod" {
			tks = append(tks, k)
		}
	}
	return append(append([]kernel(nil), kernels...), fp8Arith...), tks
}

// float8 emits an AVX-512 fp8 sum or product, 32 elements per body, as the
// portable loops compute it: widen exactly to float32, combine, round once
// to nearest even.
//
// Widening goes through float16, whose VCVTPH2PS is exact: an E5M2 byte is
// the upper byte of the float16 of the same value; an E4M3 byte, its
// magnitude shifted left by 7 under its sign, is the float16 of its value
// times 2^-8 (E4M3 binades, subnormals included, line up with float16's
// there). Sums of the scaled values are the scaled sums; products are
// scaled back up by 2^8 (exact: no float32 result here is subnormal).
//
// Narrowing: VCVTPS2PH rounding toward zero, with the lowest bit set where
// that was inexact (converted back it differs), rounds to odd, which keeps
// enough (7 or 8 bits below the fp8 significand) for one exact rounding to
// nearest even by integer addition, bias 0x7f or 0x3f plus the kept lowest
// bit, then a shift. Toward zero a float16 overflow is 65504, odd, so E5M2
// rounds it to Inf at 61440 and above as dtype does; an E4M3 magnitude
// beyond 0x7e saturates there. E5M2 NaNs come out right with no special
// case: VADDPS/VMULPS return a's NaN if a is one, else b's, quieted (the
// widening quiets too), else the default NaN, and the conversion keeps
// the sign and leading payload bits, as dtype.Float8E5M2FromFloat32 does.
// E4M3 has no Inf, so its inputs' NaNs (scaled, they widen to numbers)
// are put back by byte compares, a's over b's.
func float8(e4m3 bool, op floatOp) emitter {
	return func(g *gen) (int, func(d, a, b operand.Mem)) {
		c := g.c
		one := g.bcast32(0x00010001)
		var sign, mag, low7, bias, seven, top, scale reg.VecVirtual
		if e4m3 {
			sign, low7 = g.bcast32(0x80008000), g.bcast32(0x3f803f80)
			mag, bias = g.bcast32(0x7fff7fff), g.bcast32(0x003f003f)
			seven, top = g.bcast32(0x007f007f), g.bcast32(0x007e007e)
			if op == opProd {
				scale = g.bcast32(0x43800000) // 256.0
			}
		} else {
			bias = g.bcast32(0x007f007f)
		}
		widen := func(m operand.Mem) (w, lo, hi reg.VecVirtual) {
			w = g.vec()
			c.VPMOVZXBW(m, w)
			h := g.to(c.VPSLLW, operand.U8(8), w)
			if e4m3 {
				h = g.or(g.and(h, sign), g.and(g.to(c.VPSLLW, operand.U8(7), w), low7))
			}
			up := c.YMM()
			c.VEXTRACTI64X4(operand.U8(1), h, up)
			lo, hi = g.vec(), g.vec()
			c.VCVTPH2PS(h.AsY(), lo)
			c.VCVTPH2PS(up, hi)
			return w, lo, hi
		}
		// narrow returns r rounded to odd as float16 and the mask of
		// its inexact lanes.
		narrow := func(r reg.VecVirtual) (reg.VecVirtual, reg.OpmaskVirtual) {
			if scale != nil {
				r = g.to(c.VMULPS, scale, r)
			}
			h := c.YMM()
			c.VCVTPS2PH(operand.U8(3), r, h) // toward zero
			back := g.vec()
			c.VCVTPH2PS(h, back)
			k := c.K()
			c.VCMPPS(operand.U8(4), back, r, k) // not equal, or unordered
			return h, k
		}
		return 32, func(d, a, b operand.Mem) {
			xw, xlo, xhi := widen(a)
			yw, ylo, yhi := widen(b)
			h0, k0 := narrow(g.apply32(op, nil, xlo, ylo))
			h1, k1 := narrow(g.apply32(op, nil, xhi, yhi))
			h := g.vec()
			c.VINSERTI64X4(operand.U8(1), h1, h0.AsZ(), h)
			k := c.K()
			c.KUNPCKWD(k0, k1, k)
			c.VMOVDQU16(g.or(h, one), k, h) // merge: sticky bit where inexact
			var out reg.VecVirtual
			if e4m3 {
				m := g.and(h, mag)
				lsb := g.and(g.to(c.VPSRLW, operand.U8(7), m), one)
				t := g.to(c.VPADDW, lsb, g.to(c.VPADDW, bias, m))
				t = g.to(c.VPMINUW, top, g.to(c.VPSRLW, operand.U8(7), t))
				out = g.or(t, g.to(c.VPSRLW, operand.U8(8), g.and(h, sign)))
				ka, kb := c.K(), c.K()
				c.VPCMPEQW(seven, g.and(xw, seven), ka)
				c.VPCMPEQW(seven, g.and(yw, seven), kb)
				c.VMOVDQU16(yw, kb, out)
				c.VMOVDQU16(xw, ka, out)
			} else {
				lsb := g.and(g.to(c.VPSRLW, operand.U8(8), h), one)
				t := g.to(c.VPADDW, lsb, g.to(c.VPADDW, bias, h))
				out = g.to(c.VPSRLW, operand.U8(8), t)
			}
			c.VPMOVWB(out, d)
		}
	}
}
