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
