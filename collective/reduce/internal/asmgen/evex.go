package asmgen

import (
	"fmt"
	"strings"

	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Go 1.26's assembler, and so avo v0.5.0, knows no AVX-512 FP16 (or BF16)
// instruction. The kernels that use them emit each as a placeholder avo
// instruction (raw) whose operands take part in register allocation like
// any other; after allocation, encodeRaw replaces it by its EVEX bytes,
// written as BYTE directives with the instruction in a comment.

// evex is one 512-bit EVEX instruction form (Intel SDM vol. 2, 2.7, and the
// AVX-512 FP16 architecture specification, which adds opcode maps 5 and 6):
// ModRM.reg is the destination, EVEX.vvvv the first source (if nds), ModRM.rm
// the second source, a register or a full-vector memory operand. W is 0 in
// every form used here, and none is masked.
type evex struct {
	name   string // mnemonic, in the comment of the output
	isa    string // the CPUID feature it needs
	pp     byte   // implied prefix: 0 none, 1 66, 2 F3, 3 F2
	mmm    byte   // opcode map: 1 0F, 2 0F38, 3 0F3A, 5 MAP5
	opcode byte
	nds    bool // has a vvvv source
	imm    bool // ends with an imm8
	// rc is 0, or 1 + the static rounding mode of a register-only form
	// (EVEX.b set, L'L the mode: 2 toward +Inf, 3 toward zero)
	rc byte
}

// rounded returns e with static rounding mode rc (2 up, 3 toward zero),
// suffix naming it.
func (e evex) rounded(rc byte, suffix string) evex {
	e.name, e.rc = e.name+"_"+suffix+"_SAE", rc+1
	return e
}

// The instructions the kernels use, with their SDM opcode lines.
var (
	vaddph = evex{"VADDPH", "AVX512FP16", 0, 5, 0x58, true, false, 0} // EVEX.512.NP.MAP5.W0 58 /r
	vmulph = evex{"VMULPH", "AVX512FP16", 0, 5, 0x59, true, false, 0} // EVEX.512.NP.MAP5.W0 59 /r
	vminph = evex{"VMINPH", "AVX512FP16", 0, 5, 0x5d, true, false, 0} // EVEX.512.NP.MAP5.W0 5D /r
	vmaxph = evex{"VMAXPH", "AVX512FP16", 0, 5, 0x5f, true, false, 0} // EVEX.512.NP.MAP5.W0 5F /r
	vcmpph = evex{"VCMPPH", "AVX512FP16", 0, 3, 0xc2, true, true, 0}  // EVEX.512.NP.0F3A.W0 C2 /r ib

	vaddphRZ, vmulphRZ = vaddph.rounded(3, "RZ"), vmulph.rounded(3, "RZ")
)

// rawForms are the placeholders encodeRaw replaces, by opcode.
var rawForms = map[string]evex{}

func init() {
	for _, e := range []evex{vaddph, vmulph, vminph, vmaxph, vcmpph, vaddphRZ, vmulphRZ} {
		rawForms[e.name] = e
	}
}

// raw emits e with operands in Go's order (the imm8 if any, ModRM.rm,
// vvvv if any, the destination last) as a placeholder for encodeRaw.
func (g *gen) raw(e evex, ops ...operand.Op) {
	g.c.Instruction(&ir.Instruction{
		Opcode:   e.name,
		Operands: ops,
		Inputs:   ops[:len(ops)-1],
		Outputs:  ops[len(ops)-1:],
		ISA:      []string{"AVX512F", e.isa},
	})
}

// rawTo is raw as an ins, for g.to.
func (g *gen) rawTo(e evex) ins {
	return func(ops ...operand.Op) { g.raw(e, ops...) }
}

// RawInstruction is one encoded placeholder.
type RawInstruction struct {
	Asm   string // in Go's syntax, as the output's comment shows it
	Bytes []byte
	Intel string // the text binutils' objdump -M intel prints for Bytes
}

// encodeRaw is the pass, after register allocation, that replaces each
// placeholder by its bytes; it records each in done.
type encodeRaw struct{ done []RawInstruction }

func (p *encodeRaw) Execute(f *ir.File) error {
	for _, fn := range f.Functions() {
		for _, i := range fn.Instructions() {
			e, ok := rawForms[i.Opcode]
			if !ok {
				continue
			}
			b, err := e.encode(i.Operands)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", fn.Name, e.name, err)
			}
			asm := e.name + " " + joinAsm(i.Operands)
			p.done = append(p.done, RawInstruction{asm, b, e.intel(i.Operands)})
			var text []string
			for _, x := range b {
				text = append(text, fmt.Sprintf("BYTE $0x%02x", x))
			}
			i.Opcode = strings.Join(text, "; ") + " // " + asm
			i.Operands = nil
		}
	}
	return nil
}

func joinAsm(ops []operand.Op) string {
	s := make([]string, len(ops))
	for j, op := range ops {
		s[j] = op.Asm()
	}
	return strings.Join(s, ", ")
}

// encode returns the bytes of e with physical operands in Go's order.
func (e evex) encode(ops []operand.Op) ([]byte, error) {
	want := 2
	if e.nds {
		want++
	}
	if e.imm {
		want++
	}
	if len(ops) != want {
		return nil, fmt.Errorf("%d operands, want %d", len(ops), want)
	}
	var imm []byte
	if e.imm {
		u, ok := ops[0].(operand.U8)
		if !ok {
			return nil, fmt.Errorf("operand %s is no imm8", ops[0].Asm())
		}
		imm, ops = []byte{byte(u)}, ops[1:]
	}
	r, err := index(ops[len(ops)-1], reg.KindVector, reg.KindOpmask)
	if err != nil {
		return nil, err
	}
	v := byte(0)
	if e.nds {
		if v, err = index(ops[1], reg.KindVector); err != nil {
			return nil, err
		}
	}
	// P0: R X B R' 0 mmm, the register bits inverted.
	p0 := (^r>>3&1)<<7 | 1<<6 | 1<<5 | (^r>>4&1)<<4 | e.mmm
	p1 := (^v&15)<<3 | 1<<2 | e.pp  // W0
	p2 := byte(2<<5) | (^v>>4&1)<<3 // L'L = 10 (512 bits), z = b = aaa = 0
	modrm := (r & 7) << 3
	var tail []byte
	switch rm := ops[0].(type) {
	case reg.Register:
		b, err := index(rm, reg.KindVector)
		if err != nil {
			return nil, err
		}
		p0 &^= (b>>3&1)<<5 | (b>>4&1)<<6 // B and X extend rm
		modrm |= 0xc0 | b&7
		if e.rc != 0 {
			p2 = (e.rc-1)<<5 | 1<<4 | p2&(1<<3) // L'L the mode, b set
		}
	case operand.Mem:
		if e.rc != 0 {
			return nil, fmt.Errorf("memory operand %s with static rounding", rm.Asm())
		}
		if rm.Symbol.Name != "" {
			return nil, fmt.Errorf("memory operand %s: only base+index*scale+disp", rm.Asm())
		}
		base, err := index(rm.Base, reg.KindGP)
		if err != nil {
			return nil, err
		}
		p0 &^= (base >> 3 & 1) << 5
		sib, hasSIB := byte(0), rm.Index != nil || base&7 == 4
		if rm.Index != nil {
			x, err := index(rm.Index, reg.KindGP)
			if err != nil || x == 4 {
				return nil, fmt.Errorf("bad index register in %s", rm.Asm())
			}
			scale := map[uint8]byte{1: 0, 2: 1, 4: 2, 8: 3}[rm.Scale]
			p0 &^= (x >> 3 & 1) << 6
			sib = scale<<6 | (x&7)<<3 | base&7
		} else {
			sib = 4<<3 | base&7 // no index
		}
		// disp8*N compression, N = 64 for a full 512-bit operand.
		switch d := rm.Disp; {
		case d == 0 && base&7 != 5:
		case d%64 == 0 && d/64 >= -128 && d/64 <= 127:
			modrm |= 0x40
			tail = []byte{byte(int8(d / 64))}
		default:
			modrm |= 0x80
			tail = []byte{byte(d), byte(d >> 8), byte(d >> 16), byte(d >> 24)}
		}
		if hasSIB {
			modrm |= 4
			tail = append([]byte{sib}, tail...)
		} else {
			modrm |= base & 7
		}
	default:
		return nil, fmt.Errorf("operand %s is neither register nor memory", ops[0].Asm())
	}
	out := []byte{0x62, p0, p1, p2, e.opcode, modrm}
	return append(append(out, tail...), imm...), nil
}

// index returns the encoding number of physical register op, which must
// be of one of the kinds.
func index(op operand.Op, kinds ...reg.Kind) (byte, error) {
	r, ok := op.(reg.Register)
	if ok {
		if p := reg.ToPhysical(r); p != nil {
			for _, k := range kinds {
				if p.Kind() == k {
					return byte(p.PhysicalIndex()), nil
				}
			}
		}
	}
	if op == nil {
		return 0, fmt.Errorf("missing register")
	}
	return 0, fmt.Errorf("operand %s is not a physical register of the right kind", op.Asm())
}

// intel renders e with its operands as binutils' objdump -M intel prints
// it, for the test that disassembles every encoding.
func (e evex) intel(ops []operand.Op) string {
	name := strings.ToLower(strings.Fields(strings.ReplaceAll(e.name, "_", " "))[0])
	var imm string
	if e.imm {
		u := ops[0].(operand.U8)
		ops = ops[1:]
		if e == vcmpph { // objdump names the predicate
			preds := []string{"eq", "lt", "le", "unord", "neq", "nlt", "nle", "ord"}
			if int(u) < len(preds) {
				name = "vcmp" + preds[u] + "ph"
			} else {
				imm = fmt.Sprintf(",0x%x", int(u))
			}
		} else {
			imm = fmt.Sprintf(",0x%x", int(u))
		}
	}
	var s []string
	for j := len(ops) - 1; j >= 0; j-- {
		s = append(s, intelOperand(ops[j]))
	}
	if e.rc != 0 {
		s[len(s)-1] += "{" + []string{"rn", "rd", "ru", "rz"}[e.rc-1] + "-sae}"
	}
	return name + " " + strings.Join(s, ",") + imm
}

func intelOperand(op operand.Op) string {
	switch op := op.(type) {
	case reg.Register:
		p := reg.ToPhysical(op)
		switch p.Kind() {
		case reg.KindVector:
			return fmt.Sprintf("zmm%d", p.PhysicalIndex())
		case reg.KindOpmask:
			return fmt.Sprintf("k%d", p.PhysicalIndex())
		}
	case operand.Mem:
		s := "ZMMWORD PTR [" + gpName(op.Base)
		if op.Index != nil {
			s += fmt.Sprintf("+%s*%d", gpName(op.Index), op.Scale)
		}
		switch {
		case op.Disp > 0:
			s += fmt.Sprintf("+0x%x", op.Disp)
		case op.Disp < 0:
			s += fmt.Sprintf("-0x%x", -op.Disp)
		case reg.ToPhysical(op.Base).PhysicalIndex()&7 == 5: // disp8 0
			s += "+0x0"
		}
		return s + "]"
	}
	return "?" + op.Asm()
}

func gpName(r reg.Register) string {
	names := []string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"}
	i := reg.ToPhysical(r).PhysicalIndex()
	if i < 8 {
		return names[i]
	}
	return fmt.Sprintf("r%d", i)
}
