package neongen

import (
	"bytes"
	"fmt"
)

// arr is a vector arrangement: element size (log2 bytes) and whether the
// register is full (Q) or its lower half.
type arr struct {
	size uint32 // 0 = 8-bit, 1 = 16, 2 = 32, 3 = 64
	q    uint32
	name string
}

var (
	b16 = arr{0, 1, "16B"}
	h4  = arr{1, 0, "4H"}
	h8  = arr{1, 1, "8H"}
	s2  = arr{2, 0, "2S"}
	s4  = arr{2, 1, "4S"}
	d2  = arr{3, 1, "2D"}
)

// threeOp is an instruction of the "three registers of the same type"
// class: U bit, opcode, and for floats the size field's top bit (sz is
// the element size) or for logic a fixed size field.
type threeOp struct {
	name   string
	u, opc uint32
	kind   int // 0 integer, 1 float (a is bit 23), 2 logic (size fixed)
	a      uint32
}

var (
	add   = threeOp{"ADD", 0, 0x10, 0, 0}
	mul   = threeOp{"MUL", 0, 0x13, 0, 0}
	smax  = threeOp{"SMAX", 0, 0x0c, 0, 0}
	smin  = threeOp{"SMIN", 0, 0x0d, 0, 0}
	umax  = threeOp{"UMAX", 1, 0x0c, 0, 0}
	umin  = threeOp{"UMIN", 1, 0x0d, 0, 0}
	cmgt  = threeOp{"CMGT", 0, 0x06, 0, 0}
	cmhi  = threeOp{"CMHI", 1, 0x06, 0, 0}
	cmeq  = threeOp{"CMEQ", 1, 0x11, 0, 0}
	cmtst = threeOp{"CMTST", 0, 0x11, 0, 0}
	fadd  = threeOp{"FADD", 0, 0x1a, 1, 0}
	fmul  = threeOp{"FMUL", 1, 0x1b, 1, 0}
	fmax  = threeOp{"FMAX", 0, 0x1e, 1, 0}
	fmin  = threeOp{"FMIN", 0, 0x1e, 1, 1}
	fcmeq = threeOp{"FCMEQ", 0, 0x1c, 1, 0}
	and   = threeOp{"AND", 0, 0x03, 2, 0}
	bic   = threeOp{"BIC", 0, 0x03, 2, 1}
	orr   = threeOp{"ORR", 0, 0x03, 2, 2}
	eor   = threeOp{"EOR", 1, 0x03, 2, 0}
	bsl   = threeOp{"BSL", 1, 0x03, 2, 1}
)

// miscOp is a "two-register miscellaneous" instruction.
type miscOp struct {
	name   string
	u, opc uint32
}

var (
	rev64  = miscOp{"REV64", 0, 0x00}
	uaddlp = miscOp{"UADDLP", 1, 0x02}
	xtn    = miscOp{"XTN", 0, 0x12}
	shll   = miscOp{"SHLL", 1, 0x13}
	fcvtn  = miscOp{"FCVTN", 0, 0x16}
	fcvtl  = miscOp{"FCVTL", 0, 0x17}
)

// shiftOp is a "shift by immediate" instruction; right shifts encode
// 2*esize - shift, left ones esize + shift.
type shiftOp struct {
	name   string
	u, opc uint32
	right  bool
}

var (
	ushr  = shiftOp{"USHR", 1, 0x00, true}
	shl   = shiftOp{"SHL", 0, 0x0a, false}
	shrn  = shiftOp{"SHRN", 0, 0x10, true}
	sshll = shiftOp{"SSHLL", 0, 0x14, false}
)

// asm writes Go assembly; vector instructions as WORDs.
type asm struct{ b *bytes.Buffer }

func (a *asm) word(enc uint32, format string, args ...any) {
	fmt.Fprintf(a.b, "\tWORD $0x%08x // %s\n", enc, fmt.Sprintf(format, args...))
}

func regs(enc uint32, d, n, m int) uint32 {
	return enc | uint32(m)<<16 | uint32(n)<<5 | uint32(d)
}

// three emits op Vd, Vn, Vm (arm's operand order: d = n op m).
func (a *asm) three(op threeOp, ar arr, d, n, m int) {
	var size uint32
	switch op.kind {
	case 0:
		size = ar.size
	case 1:
		size = op.a<<1 | (ar.size - 2)
	case 2:
		size, ar = op.a, b16
	}
	enc := 0x0e200400 | ar.q<<30 | op.u<<29 | size<<22 | op.opc<<11
	a.word(regs(enc, d, n, m), "%s V%d.%s, V%d.%s, V%d.%s", op.name, d, ar.name, n, ar.name, m, ar.name)
}

// miscRaw emits a two-register instruction with an explicit size field
// and Q bit; text is its operands.
func (a *asm) miscRaw(op miscOp, size, q uint32, d, n int, text string) {
	enc := 0x0e200800 | q<<30 | op.u<<29 | size<<22 | op.opc<<12
	a.word(regs(enc, d, n, 0), "%s%s %s", op.name, suffix2(q, op), text)
}

func suffix2(q uint32, op miscOp) string {
	if q == 1 && (op == xtn || op == shll || op == fcvtn || op == fcvtl) {
		return "2"
	}
	return ""
}

// misc emits a two-register instruction whose arrangement is ar (for XTN
// the narrow one).
func (a *asm) misc(op miscOp, ar arr, d, n int) {
	a.miscRaw(op, ar.size, ar.q, d, n, fmt.Sprintf("V%d.%s, V%d.%s", d, ar.name, n, ar.name))
}

// fcvtl widens half (0 lower, 1 upper) of n's float16 lanes to d's float32.
func (a *asm) fcvtl(half int, d, n int) {
	a.miscRaw(fcvtl, 0, uint32(half), d, n, fmt.Sprintf("V%d.4S, V%d.%s", d, n, [2]string{"4H", "8H"}[half]))
}

// fcvtn narrows n's float32 lanes into half of d's float16 lanes.
func (a *asm) fcvtn(half int, d, n int) {
	a.miscRaw(fcvtn, 0, uint32(half), d, n, fmt.Sprintf("V%d.%s, V%d.4S", d, [2]string{"4H", "8H"}[half], n))
}

// widenBF16 shifts half of n's 16-bit lanes into the top of d's 32-bit
// lanes (SHLL #16).
func (a *asm) widenBF16(half int, d, n int) {
	a.miscRaw(shll, 1, uint32(half), d, n, fmt.Sprintf("V%d.4S, V%d.%s, #16", d, n, [2]string{"4H", "8H"}[half]))
}

// shift emits op Vd, Vn, #sh with arrangement ar.
func (a *asm) shift(op shiftOp, ar arr, d, n, sh int) {
	esize := 8 << ar.size
	a.shiftRaw(op, ar.q, esize, d, n, sh, fmt.Sprintf("V%d.%s, V%d.%s, #%d", d, ar.name, n, ar.name, sh))
}

func (a *asm) shiftRaw(op shiftOp, q uint32, esize, d, n, sh int, text string) {
	imm := esize + sh
	if op.right {
		imm = 2*esize - sh
	}
	enc := 0x0f000400 | q<<30 | op.u<<29 | uint32(imm)<<16 | op.opc<<11
	name := op.name
	if q == 1 && (op == shrn || op == sshll) {
		name += "2"
	}
	a.word(regs(enc, d, n, 0), "%s %s", name, text)
}

// narrowShift shifts n's lanes (twice ar's element size) right by sh
// into half of d's lanes of arrangement ar's element (SHRN).
func (a *asm) narrowShift(half int, ar arr, d, n, sh int) {
	esize := 8 << ar.size
	a.shiftRaw(shrn, uint32(half), esize, d, n, sh, fmt.Sprintf("V%d.%s, V%d.4S, #%d", d, [2]string{"4H", "8H"}[half], n, sh))
}

// sxtl sign-extends half of n's 16-bit lanes to d's 32-bit lanes.
func (a *asm) sxtl(half int, d, n int) {
	a.shiftRaw(sshll, uint32(half), 16, d, n, 0, fmt.Sprintf("V%d.4S, V%d.%s, #0", d, n, [2]string{"4H", "8H"}[half]))
}

// long emits a "three registers of different types" widening op; ar is
// the narrow source arrangement.
func (a *asm) long(op threeOp, ar arr, d, n, m int) {
	enc := 0x0e200000 | op.u<<29 | ar.size<<22 | op.opc<<12
	a.word(regs(enc, d, n, m), "%s V%d.2D, V%d.%s, V%d.%s", op.name, d, n, ar.name, m, ar.name)
}

var umull = threeOp{"UMULL", 1, 0x0c, 0, 0}

// dup copies general register r to every lane of Vd.
func (a *asm) dup(ar arr, d, r int) {
	imm5 := uint32(1) << ar.size
	enc := 0x0e000c00 | ar.q<<30 | imm5<<16 | uint32(r)<<5 | uint32(d)
	reg := "W"
	if ar.size == 3 {
		reg = "X"
	}
	a.word(enc, "DUP V%d.%s, %s%d", d, ar.name, reg, r)
}
