// Floor loops of bench/fp8_bound.sh ISA=avx2 (Go assembly, appended to its
// probe's k_amd64.s; not built by go build, being under testdata).
// AVX2 floors (ISA=avx2). Each loop takes 32 bytes of a and of b a
// iteration and stores 32; none computes a correct fp8 result.

// func boundF16C(dst, a, b *byte, n int)
// The F16C route (today's kernels) for E5M2, whose fp8 byte is the upper
// byte of its float16: words by VPUNPCKL/HBW with zero (inputs as memory
// operands), 8 VCVTPH2PS from registers, 4 VADDPS, 4 VCVTPS2PH into
// registers, bytes back by 2 VINSERTI128, 2 VPSRLW, VPACKUSWB, VPERMQ.
// 30 vector instructions, no rounding, no E4M3 widening, no NaN test.
TEXT ·boundF16C(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), AX
	MOVQ a+8(FP), CX
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), BX
	VPXOR X15, X15, X15
	XORQ DI, DI
f16loop:
	VPUNPCKLBW (CX)(DI*1), X15, X0
	VPUNPCKHBW (CX)(DI*1), X15, X1
	VPUNPCKLBW 16(CX)(DI*1), X15, X2
	VPUNPCKHBW 16(CX)(DI*1), X15, X3
	VPUNPCKLBW (DX)(DI*1), X15, X4
	VPUNPCKHBW (DX)(DI*1), X15, X5
	VPUNPCKLBW 16(DX)(DI*1), X15, X6
	VPUNPCKHBW 16(DX)(DI*1), X15, X7
	VCVTPH2PS X0, Y0
	VCVTPH2PS X1, Y1
	VCVTPH2PS X2, Y2
	VCVTPH2PS X3, Y3
	VCVTPH2PS X4, Y4
	VCVTPH2PS X5, Y5
	VCVTPH2PS X6, Y6
	VCVTPH2PS X7, Y7
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VCVTPS2PH $0, Y0, X0
	VCVTPS2PH $0, Y1, X1
	VCVTPS2PH $0, Y2, X2
	VCVTPS2PH $0, Y3, X3
	VINSERTI128 $1, X1, Y0, Y0
	VINSERTI128 $1, X3, Y2, Y2
	VPSRLW $8, Y0, Y0
	VPSRLW $8, Y2, Y2
	VPACKUSWB Y2, Y0, Y0
	VPERMQ $0xd8, Y0, Y0
	VMOVDQU Y0, (AX)(DI*1)
	ADDQ $32, DI
	CMPQ DI, BX
	JB f16loop
	VZEROUPPER
	RET

// func boundF16CMem(dst, a, b *byte, n int)
// boundF16C with the widening through memory: VCVTPH2PS from a memory
// source takes half the time of one from a register on AMD Zen 3 (and
// does not compete with VCVTPS2PH as much), so the words (4 VPUNPCKL/HBW
// on ymm) are stored to a scratch buffer and converted from there: 26
// vector instructions and 4 more stores.
TEXT ·boundF16CMem(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), AX
	MOVQ a+8(FP), CX
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), BX
	MOVQ $·scratch(SB), SI
	VPXOR Y15, Y15, Y15
	XORQ DI, DI
f16mloop:
	VPUNPCKLBW (CX)(DI*1), Y15, Y0
	VPUNPCKHBW (CX)(DI*1), Y15, Y1
	VPUNPCKLBW (DX)(DI*1), Y15, Y2
	VPUNPCKHBW (DX)(DI*1), Y15, Y3
	VMOVDQU Y0, 0(SI)
	VMOVDQU Y1, 32(SI)
	VMOVDQU Y2, 64(SI)
	VMOVDQU Y3, 96(SI)
	VCVTPH2PS 0(SI), Y0
	VCVTPH2PS 16(SI), Y1
	VCVTPH2PS 32(SI), Y2
	VCVTPH2PS 48(SI), Y3
	VCVTPH2PS 64(SI), Y4
	VCVTPH2PS 80(SI), Y5
	VCVTPH2PS 96(SI), Y6
	VCVTPH2PS 112(SI), Y7
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VCVTPS2PH $0, Y0, X0
	VCVTPS2PH $0, Y1, X1
	VCVTPS2PH $0, Y2, X2
	VCVTPS2PH $0, Y3, X3
	VINSERTI128 $1, X1, Y0, Y0
	VINSERTI128 $1, X3, Y2, Y2
	VPSRLW $8, Y0, Y0
	VPSRLW $8, Y2, Y2
	VPACKUSWB Y2, Y0, Y0
	VPERMQ $0xd8, Y0, Y0
	VMOVDQU Y0, (AX)(DI*1)
	ADDQ $32, DI
	CMPQ DI, BX
	JB f16mloop
	VZEROUPPER
	RET

// func boundF32(dst, a, b *byte, n int)
// The float32 route without F16C: each fp8 byte sign-extended to a
// dword (VPMOVSXBD from memory), moved to its float32 place (VPSLLD 21
// for E5M2: exponent and mantissa at bits 21-27, the sign at 28 and up)
// and its exponent's upper bits cleared (VPAND 0x8fffffff): the value
// times 2^-112, exact, subnormals included, so a sum needs no rescaling;
// 4 VADDPS; back by VPSRAD 21 (sign in the upper bits), 2 VPACKSSDW, one
// VPACKSSWB, one VPERMD. 36 vector instructions, no rounding, no
// saturation, no NaN; E4M3 needs as many. bench/fp8_bound.sh derives
// boundF32Mul from it: the shifts left as VPMULLD by 2^21 (Y13), which
// run on other pipes than VPMOVSXBD and the shifts on AMD Zen 3 (the
// cheaper of the two is the floor).
TEXT ·boundF32(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), AX
	MOVQ a+8(FP), CX
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), BX
	MOVL $0x8fffffff, SI
	VMOVD SI, X15
	VPBROADCASTD X15, Y15
	MOVL $0x00200000, SI
	VMOVD SI, X13
	VPBROADCASTD X13, Y13
	VPXOR Y14, Y14, Y14
	XORQ DI, DI
f32loop:
	VPMOVSXBD (CX)(DI*1), Y0
	VPMOVSXBD 8(CX)(DI*1), Y1
	VPMOVSXBD 16(CX)(DI*1), Y2
	VPMOVSXBD 24(CX)(DI*1), Y3
	VPMOVSXBD (DX)(DI*1), Y4
	VPMOVSXBD 8(DX)(DI*1), Y5
	VPMOVSXBD 16(DX)(DI*1), Y6
	VPMOVSXBD 24(DX)(DI*1), Y7
	VPSLLD $21, Y0, Y0
	VPSLLD $21, Y1, Y1
	VPSLLD $21, Y2, Y2
	VPSLLD $21, Y3, Y3
	VPSLLD $21, Y4, Y4
	VPSLLD $21, Y5, Y5
	VPSLLD $21, Y6, Y6
	VPSLLD $21, Y7, Y7
	VPAND Y15, Y0, Y0
	VPAND Y15, Y1, Y1
	VPAND Y15, Y2, Y2
	VPAND Y15, Y3, Y3
	VPAND Y15, Y4, Y4
	VPAND Y15, Y5, Y5
	VPAND Y15, Y6, Y6
	VPAND Y15, Y7, Y7
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VPSRAD $21, Y0, Y0
	VPSRAD $21, Y1, Y1
	VPSRAD $21, Y2, Y2
	VPSRAD $21, Y3, Y3
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD Y0, Y14, Y0
	VMOVDQU Y0, (AX)(DI*1)
	ADDQ $32, DI
	CMPQ DI, BX
	JB f32loop
	VZEROUPPER
	RET

// func boundGather(dst, a, b *byte, n int)
// The pair-table route: one table of 65536 results (a<<8 | b), gathered
// per element: indexes by 8 VPMOVZXBD, 4 VPSLLD, 4 VPOR; 4 VPGATHERDD
// (each with its mask set by VPCMPEQD); bytes back by 2 VPACKUSDW, one
// VPACKUSWB, one VPERMD.
TEXT ·boundGather(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), AX
	MOVQ a+8(FP), CX
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), BX
	MOVQ $·pairs(SB), SI
	VPXOR Y14, Y14, Y14
	XORQ DI, DI
gloop:
	VPMOVZXBD (CX)(DI*1), Y0
	VPMOVZXBD 8(CX)(DI*1), Y1
	VPMOVZXBD 16(CX)(DI*1), Y2
	VPMOVZXBD 24(CX)(DI*1), Y3
	VPMOVZXBD (DX)(DI*1), Y4
	VPMOVZXBD 8(DX)(DI*1), Y5
	VPMOVZXBD 16(DX)(DI*1), Y6
	VPMOVZXBD 24(DX)(DI*1), Y7
	VPSLLD $8, Y0, Y0
	VPSLLD $8, Y1, Y1
	VPSLLD $8, Y2, Y2
	VPSLLD $8, Y3, Y3
	VPOR Y4, Y0, Y0
	VPOR Y5, Y1, Y1
	VPOR Y6, Y2, Y2
	VPOR Y7, Y3, Y3
	VPCMPEQD Y8, Y8, Y8
	VPGATHERDD Y8, (SI)(Y0*1), Y4
	VPCMPEQD Y9, Y9, Y9
	VPGATHERDD Y9, (SI)(Y1*1), Y5
	VPCMPEQD Y10, Y10, Y10
	VPGATHERDD Y10, (SI)(Y2*1), Y6
	VPCMPEQD Y11, Y11, Y11
	VPGATHERDD Y11, (SI)(Y3*1), Y7
	VPACKUSDW Y5, Y4, Y4
	VPACKUSDW Y7, Y6, Y6
	VPACKUSWB Y6, Y4, Y4
	VPERMD Y4, Y14, Y4
	VMOVDQU Y4, (AX)(DI*1)
	ADDQ $32, DI
	CMPQ DI, BX
	JB gloop
	VZEROUPPER
	RET

// func boundInt16(dst, a, b *byte, n int)
// An integer route on 16-bit lanes (no float32: 16 elements a vector,
// not 8), reduced to steps any such sum needs, 28 per 32 bytes: words by
// VPMOVZXBW (inputs from memory); exponent fields (VPSRLW); their
// difference (VPSUBW, VPABSW); the aligning factor 2^(16-d) from a
// nibble table (two VPSHUFB, its bytes); the smaller operand aligned
// (VPMULHUW); added (VPADDW); a normalising factor from a nibble table
// (VPSHUFB) applied (VPMULLW); one rounding add; bytes back (VPACKUSWB,
// VPERMQ). A working E4M3 sum in 16-bit lanes also needs the implicit
// bits, the signs, the operands' order, a 16-bit leading-zero count
// (AVX2 has no VPLZCNT, no 16-bit variable shifts), ties to even,
// saturation and NaNs: about 70 instructions per 32 bytes by my count.
TEXT ·boundInt16(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), AX
	MOVQ a+8(FP), CX
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), BX
	MOVQ $·nibbles(SB), SI
	VMOVDQU 0(SI), Y13
	VMOVDQU 32(SI), Y14
	VMOVDQU 64(SI), Y15
	XORQ DI, DI
i16loop:
	VPMOVZXBW (CX)(DI*1), Y0
	VPMOVZXBW 16(CX)(DI*1), Y1
	VPMOVZXBW (DX)(DI*1), Y2
	VPMOVZXBW 16(DX)(DI*1), Y3
	VPSRLW $3, Y0, Y4
	VPSRLW $3, Y1, Y5
	VPSRLW $3, Y2, Y6
	VPSRLW $3, Y3, Y7
	VPSUBW Y6, Y4, Y4
	VPSUBW Y7, Y5, Y5
	VPABSW Y4, Y4
	VPABSW Y5, Y5
	VPSHUFB Y4, Y13, Y6
	VPSHUFB Y5, Y13, Y7
	VPSHUFB Y4, Y14, Y8
	VPSHUFB Y5, Y14, Y9
	VPMULHUW Y6, Y2, Y2
	VPMULHUW Y7, Y3, Y3
	VPADDW Y2, Y0, Y0
	VPADDW Y3, Y1, Y1
	VPSHUFB Y0, Y15, Y10
	VPSHUFB Y1, Y15, Y11
	VPMULLW Y10, Y0, Y0
	VPMULLW Y11, Y1, Y1
	VPADDW Y8, Y0, Y0
	VPADDW Y9, Y1, Y1
	VPACKUSWB Y1, Y0, Y0
	VPERMQ $0xd8, Y0, Y0
	VMOVDQU Y0, (AX)(DI*1)
	ADDQ $32, DI
	CMPQ DI, BX
	JB i16loop
	VZEROUPPER
	RET
