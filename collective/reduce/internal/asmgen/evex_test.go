package asmgen

import (
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// evexCases are encodings worked out from the SDM's tables (EVEX prefix
// fields, ModRM/SIB, disp8*N) and, independently, assembled by GNU as
// 2.40 from the Intel text: registers above 7 and 15 in every field,
// memory operands with disp 0 (and base r13, which needs a disp8), disp8*64
// and disp32.
var evexCases = []struct {
	e     evex
	ops   []operand.Op
	hex   string
	intel string
}{
	{vaddph, ops(reg.Z1, reg.Z2, reg.Z3), "62f56c4858d9", "vaddph zmm3,zmm2,zmm1"},
	{vaddph, ops(reg.Z9, reg.Z28, reg.Z19), "62c51c4058d9", "vaddph zmm19,zmm28,zmm9"},
	{vaddph, ops(mem(reg.RAX, reg.RCX, 64), reg.Z2, reg.Z3), "62f56c48585c0801", "vaddph zmm3,zmm2,ZMMWORD PTR [rax+rcx*1+0x40]"},
	{vaddph, ops(mem(reg.R13, reg.R9, 192), reg.Z17, reg.Z25), "62057440584c0d03", "vaddph zmm25,zmm17,ZMMWORD PTR [r13+r9*1+0xc0]"},
	{vaddph, ops(mem(reg.R13, reg.R9, 0), reg.Z17, reg.Z25), "62057440584c0d00", "vaddph zmm25,zmm17,ZMMWORD PTR [r13+r9*1+0x0]"},
	{vaddph, ops(mem(reg.RSI, reg.R12, 100), reg.Z17, reg.Z25), "62257440588c2664000000", "vaddph zmm25,zmm17,ZMMWORD PTR [rsi+r12*1+0x64]"},
	{vaddph, ops(mem(reg.RSI, reg.R12, 8192), reg.Z17, reg.Z25), "62257440588c2600200000", "vaddph zmm25,zmm17,ZMMWORD PTR [rsi+r12*1+0x2000]"},
	{vmulph, ops(reg.Z1, reg.Z2, reg.Z3), "62f56c4859d9", "vmulph zmm3,zmm2,zmm1"},
	{vminph, ops(reg.Z1, reg.Z2, reg.Z3), "62f56c485dd9", "vminph zmm3,zmm2,zmm1"},
	{vmaxph, ops(reg.Z1, reg.Z2, reg.Z3), "62f56c485fd9", "vmaxph zmm3,zmm2,zmm1"},
	{vcmpph, ops(operand.U8(3), reg.Z1, reg.Z2, reg.K3), "62f36c48c2d903", "vcmpunordph k3,zmm2,zmm1"},
	{vcmpph, ops(operand.U8(3), mem(reg.RBX, reg.RDX, 128), reg.Z22, reg.K5), "62f34c40c26c130203", "vcmpunordph k5,zmm22,ZMMWORD PTR [rbx+rdx*1+0x80]"},
}

func ops(o ...operand.Op) []operand.Op { return o }

func mem(base, index reg.Register, disp int) operand.Mem {
	return operand.Mem{Base: base, Index: index, Scale: 1, Disp: disp}
}

func TestEVEXEncodings(t *testing.T) {
	for _, c := range evexCases {
		got, err := c.e.encode(c.ops)
		if err != nil {
			t.Errorf("%s %s: %v", c.e.name, joinAsm(c.ops), err)
			continue
		}
		if want, _ := hex.DecodeString(c.hex); !bytes.Equal(got, want) {
			t.Errorf("%s %s = %x, want %s", c.e.name, joinAsm(c.ops), got, c.hex)
		}
		if s := c.e.intel(c.ops); s != c.intel {
			t.Errorf("%s %s renders as %q, want %q", c.e.name, joinAsm(c.ops), s, c.intel)
		}
	}
}

func TestEVEXRejectsBadOperands(t *testing.T) {
	for _, o := range [][]operand.Op{
		ops(reg.Z1, reg.Z2),                           // too few
		ops(reg.RAX, reg.Z2, reg.Z3),                  // GP register as rm
		ops(reg.Z1, reg.Z2, reg.RAX),                  // GP destination
		ops(mem(reg.RAX, reg.RSP, 0), reg.Z2, reg.Z3), // RSP cannot index
		ops(operand.NewParamAddr("a", 8), reg.Z2, reg.Z3),
	} {
		if b, err := vaddph.encode(o); err == nil {
			t.Errorf("VADDPH %s encoded as %x, want an error", joinAsm(o), b)
		}
	}
}

// TestEVEXDisassembles decodes the table's encodings and every one in the
// generated assembly with binutils' objdump (which knows AVX-512 FP16 and
// BF16 since 2.38) and compares the text with what each was meant to be.
func TestEVEXDisassembles(t *testing.T) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("no objdump on PATH")
	}
	var all []RawInstruction
	for _, c := range evexCases {
		b, _ := hex.DecodeString(c.hex)
		all = append(all, RawInstruction{Asm: c.e.name, Bytes: b, Intel: c.intel})
	}
	gen, err := RawEncodings()
	if err != nil {
		t.Fatal(err)
	}
	if len(gen) == 0 {
		t.Fatal("the generated assembly holds no raw encodings")
	}
	all = append(all, gen...)
	var code []byte
	for _, r := range all {
		code = append(code, r.Bytes...)
	}
	file := filepath.Join(t.TempDir(), "code.bin")
	if err := os.WriteFile(file, code, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(objdump, "-D", "-b", "binary", "-m", "i386:x86-64", "-M", "intel", file).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump: %v\n%s", err, out)
	}
	// Lines "  off:\tbytes\tinstruction"; long encodings continue on a
	// line with bytes only.
	var got []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		if len(f) >= 3 && strings.HasSuffix(strings.TrimSpace(f[0]), ":") {
			got = append(got, strings.Join(strings.Fields(f[2]), " "))
		}
	}
	if len(got) != len(all) {
		t.Fatalf("objdump decoded %d instructions from %d encodings:\n%s", len(got), len(all), out)
	}
	for i, r := range all {
		if got[i] != r.Intel {
			t.Errorf("%s (%x) disassembles as %q, want %q", r.Asm, r.Bytes, got[i], r.Intel)
		}
	}
	t.Logf("objdump agrees on %d encodings (%d from the generated kernels)", len(all), len(gen))
}
