// Package neongen generates the arm64 Advanced SIMD (NEON) reduction
// kernels of package reduce: simd_arm64.s and simd_neon_arm64.go. avo has
// no arm64 backend and Go's assembler lacks most vector instructions
// (FADD, FMIN, MUL, FCVTL, ...), so every vector instruction is encoded
// here and written as a WORD with its mnemonic beside it; loads, stores and
// the loop are Go assembly. Every kernel has one loop shape: load 64 bytes
// of a (V0-V3) and of b (V4-V7), compute dst (V8-V11) with temporaries in
// V12-V27 and constants in V28-V31, store, repeat.
package neongen

import (
	"bytes"
	"fmt"
	"go/format"
)

// Block is the byte multiple every kernel takes.
const Block = 64

const constraint = "arm64 && !purego"

// kernel is one generated function.
type kernel struct {
	name  string   // function name without the NEON suffix
	op    string   // reduce.Op constant
	types []string // dtype constants it serves
	// consts are (register, arrangement, value) set once before the loop.
	consts []konst
	// body emits d = x op y for one 16-byte register of each input.
	body func(a *asm, d, x, y int)
}

type konst struct {
	reg int
	arr arr
	val uint64
}

var kernels = []kernel{
	{"sumFloat32", "Sum", []string{"Float32"}, []konst{{31, s4, 1 << 22}}, floatArith(fadd, s4)},
	{"prodFloat32", "Prod", []string{"Float32"}, []konst{{31, s4, 1 << 22}}, floatArith(fmul, s4)},
	{"minFloat32", "Min", []string{"Float32"}, nil, same(fmin, s4)},
	{"maxFloat32", "Max", []string{"Float32"}, nil, same(fmax, s4)},
	{"sumFloat64", "Sum", []string{"Float64"}, []konst{{31, d2, 1 << 51}}, floatArith(fadd, d2)},
	{"prodFloat64", "Prod", []string{"Float64"}, []konst{{31, d2, 1 << 51}}, floatArith(fmul, d2)},
	{"minFloat64", "Min", []string{"Float64"}, nil, same(fmin, d2)},
	{"maxFloat64", "Max", []string{"Float64"}, nil, same(fmax, d2)},

	{"sumInt8", "Sum", []string{"Int8", "Uint8"}, nil, same(add, b16)},
	{"prodInt8", "Prod", []string{"Int8", "Uint8"}, nil, same(mul, b16)},
	{"minInt8", "Min", []string{"Int8"}, nil, same(smin, b16)},
	{"maxInt8", "Max", []string{"Int8"}, nil, same(smax, b16)},
	{"minUint8", "Min", []string{"Uint8"}, nil, same(umin, b16)},
	{"maxUint8", "Max", []string{"Uint8"}, nil, same(umax, b16)},

	{"sumInt32", "Sum", []string{"Int32", "Uint32"}, nil, same(add, s4)},
	{"prodInt32", "Prod", []string{"Int32", "Uint32"}, nil, same(mul, s4)},
	{"minInt32", "Min", []string{"Int32"}, nil, same(smin, s4)},
	{"maxInt32", "Max", []string{"Int32"}, nil, same(smax, s4)},
	{"minUint32", "Min", []string{"Uint32"}, nil, same(umin, s4)},
	{"maxUint32", "Max", []string{"Uint32"}, nil, same(umax, s4)},

	{"sumInt64", "Sum", []string{"Int64", "Uint64"}, nil, same(add, d2)},
	{"prodInt64", "Prod", []string{"Int64", "Uint64"}, nil, prodInt64},
	{"minInt64", "Min", []string{"Int64"}, nil, minMax64(cmgt, false)},
	{"maxInt64", "Max", []string{"Int64"}, nil, minMax64(cmgt, true)},
	{"minUint64", "Min", []string{"Uint64"}, nil, minMax64(cmhi, false)},
	{"maxUint64", "Max", []string{"Uint64"}, nil, minMax64(cmhi, true)},

	{"sumBFloat16", "Sum", []string{"BFloat16Type"}, bf16Consts, bfloat16(fadd, true)},
	{"prodBFloat16", "Prod", []string{"BFloat16Type"}, bf16Consts, bfloat16(fmul, true)},
	{"minBFloat16", "Min", []string{"BFloat16Type"}, nil, bfloat16(fmin, false)},
	{"maxBFloat16", "Max", []string{"BFloat16Type"}, nil, bfloat16(fmax, false)},
	{"sumFloat16", "Sum", []string{"Float16Type"}, nil, float16(fadd, false)},
	{"prodFloat16", "Prod", []string{"Float16Type"}, nil, float16(fmul, false)},
	{"minFloat16", "Min", []string{"Float16Type"}, fp16Consts, float16(fmin, true)},
	{"maxFloat16", "Max", []string{"Float16Type"}, fp16Consts, float16(fmax, true)},
}

// Temporaries.
const (
	t0 = 12 + iota
	t1
	t2
	t3
	t4
	t5
	t6
	t7
)

// same is one instruction: d = x op y (x the first source, Vn).
func same(op threeOp, ar arr) func(a *asm, d, x, y int) {
	return func(a *asm, d, x, y int) { a.three(op, ar, d, x, y) }
}

// quietIfNaN sets the quiet bit (constant register 31) of the NaN lanes
// of v into d: d = v | (q &^ (v == v)).
func quietIfNaN(a *asm, ar arr, d, v, scratch int) {
	a.three(fcmeq, ar, scratch, v, v)
	a.three(bic, b16, scratch, 31, scratch)
	a.three(orr, b16, d, v, scratch)
}

// floatArith is the portable kernels' float sum or product: a NaN result
// is a's NaN quieted if a is one, else b's quieted, else the hardware's.
// The hardware takes the first signaling NaN, else the first quiet one
// (FPCR.DN is 0 under Go), so quieting b first leaves it a's whenever a
// is a NaN.
func floatArith(op threeOp, ar arr) func(a *asm, d, x, y int) {
	return func(a *asm, d, x, y int) {
		quietIfNaN(a, ar, t1, y, t0)
		a.three(op, ar, d, x, t1)
	}
}

// minMax64 selects with a 64-bit compare (NEON has no 64-bit min/max):
// m = x > y; min = m ? y : x, max = m ? x : y.
func minMax64(cmp threeOp, isMax bool) func(a *asm, d, x, y int) {
	return func(a *asm, d, x, y int) {
		a.three(cmp, d2, d, x, y)
		if isMax {
			a.three(bsl, b16, d, x, y)
		} else {
			a.three(bsl, b16, d, y, x)
		}
	}
}

// prodInt64 builds the low 64 bits of each product from 32-bit halves
// (NEON has no 64-bit multiply): xl*yl + (xl*yh + xh*yl) << 32.
func prodInt64(a *asm, d, x, y int) {
	a.misc(rev64, s4, t0, y)                                               // (yh, yl) in each 64-bit lane
	a.three(mul, s4, t0, t0, x)                                            // (xl*yh, xh*yl)
	a.miscRaw(uaddlp, 2, 1, t0, t0, fmt.Sprintf("V%d.2D, V%d.4S", t0, t0)) // xl*yh + xh*yl, 64-bit
	a.shift(shl, d2, t0, t0, 32)                                           // its low 32 bits moved up
	a.miscRaw(xtn, 2, 0, t1, x, fmt.Sprintf("V%d.2S, V%d.2D", t1, x))      // xl
	a.miscRaw(xtn, 2, 0, t2, y, fmt.Sprintf("V%d.2S, V%d.2D", t2, y))      // yl
	a.long(umull, s2, d, t1, t2)                                           // xl*yl, 64-bit
	a.three(add, d2, d, d, t0)                                             // + the cross terms
}

// bf16Consts: V28 = 0x7fff, V29 = 1 and V31 = the float32 quiet bit, in
// 32-bit lanes.
var bf16Consts = []konst{{28, s4, 0x7fff}, {29, s4, 1}, {31, s4, 1 << 22}}

// bfloat16 widens each half of x and y to float32 exactly (a shift by 16,
// keeping signaling NaNs, as BFloat16.Float32 does), computes as the
// portable kernel (a sum or product with b quieted first, see floatArith;
// min and max as they are, FMIN and FMAX being what Go's builtins compile
// to), and narrows: sums and products rounded to nearest even as
// BFloat16FromFloat32 does, min and max truncated (they are bfloat16
// values already, and FMIN/FMAX quiet a NaN as the rounding would).
func bfloat16(op threeOp, round bool) func(a *asm, d, x, y int) {
	return func(a *asm, d, x, y int) {
		for half := range 2 {
			a.widenBF16(half, t2, x)
			a.widenBF16(half, t3, y)
			if round {
				quietIfNaN(a, s4, t3, t3, t0)
			}
			a.three(op, s4, t4, t2, t3)
			if round {
				roundBF16(a, t4)
			}
			a.narrowShift(half, h4, d, t4, 16)
		}
	}
}

// roundBF16 replaces the float32 lanes of v by their bfloat16 rounding in
// the upper 16 bits: v + 0x7fff + (bit 16 of v) for numbers, v | quiet
// bit for NaNs (BFloat16FromFloat32).
func roundBF16(a *asm, v int) {
	a.shift(ushr, s4, t5, v, 16)
	a.three(and, b16, t5, t5, 29)
	a.three(add, s4, t5, t5, 28)
	a.three(add, s4, t5, v, t5)  // rounded
	a.three(orr, b16, t6, v, 31) // NaN quieted
	a.three(fcmeq, s4, v, v, v)  // numbers
	a.three(bsl, b16, v, t5, t6)
}

// fp16Consts, in 16-bit lanes but V31: V28 = 0x7e00, V29 = 0x7c00,
// V30 = 0x01ff, V31 = the float32 quiet bit in 32-bit lanes.
var fp16Consts = []konst{{28, h8, 0x7e00}, {29, h8, 0x7c00}, {30, h8, 0x01ff}, {31, s4, 1 << 22}}

// float16 widens each half of x and y with FCVTL (exact; Go runs with
// FPCR.FZ and FZ16 clear, so subnormals stay), computes, and narrows with
// FCVTN (round to nearest even, FPCR.RMode 0; a NaN keeps its sign and
// top payload bits and gets the quiet bit, as Float16FromFloat32 does).
// FCVTL quiets signaling NaNs, which is what the portable sum and product
// give (a's NaN if it is one, quieted by the final rounding). Min and max
// take Go's builtins on Float16.Float32's values, which keep a signaling
// NaN signaling, and FMIN prefers a signaling NaN to a quiet one, so for
// them signal restores the signaling NaNs first.
func float16(op threeOp, signal bool) func(a *asm, d, x, y int) {
	return func(a *asm, d, x, y int) {
		if signal {
			signalingMask(a, t0, x)
			signalingMask(a, t1, y)
		}
		for half := range 2 {
			a.fcvtl(half, t2, x)
			a.fcvtl(half, t3, y)
			if signal {
				a.sxtl(half, t4, t0)
				a.three(and, b16, t4, t4, 31)
				a.three(eor, b16, t2, t2, t4)
				a.sxtl(half, t5, t1)
				a.three(and, b16, t5, t5, 31)
				a.three(eor, b16, t3, t3, t5)
			}
			a.three(op, s4, t4, t2, t3)
			a.fcvtn(half, d, t4)
		}
	}
}

// signalingMask sets the 16-bit lanes of d to all ones where v is a
// signaling NaN (exponent all ones, quiet bit clear, payload not zero).
func signalingMask(a *asm, d, v int) {
	a.three(and, b16, d, v, 28)
	a.three(cmeq, h8, d, d, 29)
	a.three(cmtst, h8, t7, v, 30)
	a.three(and, b16, d, d, t7)
}

// Generate returns the generated files by name.
func Generate() (map[string][]byte, error) {
	var s, g bytes.Buffer
	const head = "// Code generated by go run ./internal/neongen/run. DO NOT EDIT.\n\n//go:build " + constraint + "\n\n"
	s.WriteString(head + "#include \"textflag.h\"\n")
	g.WriteString(head + "package reduce\n\nimport \"github.com/gocoll/gocoll/collective/dtype\"\n\n")
	var table bytes.Buffer
	for _, k := range kernels {
		name := k.name + "NEON"
		fmt.Fprintf(&g, "// %s computes dst = a %s b (%s) over n bytes, n a positive multiple of %d.\n//\n//go:noescape\nfunc %s(dst, a, b *byte, n int)\n\n",
			name, k.op, k.types[0], Block, name)
		for _, t := range k.types {
			fmt.Fprintf(&table, "\t{dtype.%s, %s, %s},\n", t, k.op, name)
		}
		a := &asm{b: &s}
		fmt.Fprintf(&s, "\n// func %s(dst, a, b *byte, n int)\nTEXT ·%s(SB), NOSPLIT, $0-32\n", name, name)
		s.WriteString("\tMOVD dst+0(FP), R0\n\tMOVD a+8(FP), R1\n\tMOVD b+16(FP), R2\n\tMOVD n+24(FP), R3\n")
		for _, c := range k.consts {
			fmt.Fprintf(&s, "\tMOVD $0x%x, R4\n", c.val)
			a.dup(c.arr, c.reg, 4)
		}
		s.WriteString("\nloop:\n\tVLD1.P 64(R1), [V0.B16, V1.B16, V2.B16, V3.B16]\n\tVLD1.P 64(R2), [V4.B16, V5.B16, V6.B16, V7.B16]\n")
		for i := range 4 {
			k.body(a, 8+i, i, 4+i)
		}
		s.WriteString("\tVST1.P [V8.B16, V9.B16, V10.B16, V11.B16], 64(R0)\n\tSUBS $64, R3, R3\n\tBNE loop\n\tRET\n")
	}
	g.WriteString("// neonKernels are the NEON kernels, each for the data types and operation it serves.\nvar neonKernels = []simdKernel{\n")
	g.Write(table.Bytes())
	fmt.Fprintf(&g, "}\n\n// neonBlock is the byte multiple the NEON kernels take.\nconst neonBlock = %d\n", Block)
	src, err := format.Source(g.Bytes())
	if err != nil {
		return nil, fmt.Errorf("neongen: formatting the Go file: %w", err)
	}
	return map[string][]byte{"simd_arm64.s": s.Bytes(), "simd_neon_arm64.go": src}, nil
}
