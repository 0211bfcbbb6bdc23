#include "textflag.h"

// func fold(crc uint32, p []byte, k *[16]uint64, wide bool) uint32
//
// wide (AVX-512): Z0-Z3 hold the state, 4 x 64 bytes (16 lanes of 16 bytes); Z8 and Z9
// the multipliers for 256 and 64 bytes, the same pair in each 128-bit
// lane: qword 0 for a lane's first 8 bytes, qword 1 for its last 8. A
// fold replaces a lane by the XOR of its two halves' products and the
// lane that far on. The 64 bytes left in Z3 and the last under 64 bytes
// of p then go through the CRC32 instruction from a zero register, by
// way of the frame.
TEXT ·fold(SB), NOSPLIT, $64-52
	MOVL crc+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	MOVQ k+32(FP), DX
	CMPB wide+40(FP), $0
	JEQ  avx2

	VMOVDQU64 (DX), Z8
	VMOVDQU64 64(DX), Z9
	VMOVDQU64 (SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VPXORQ    Z4, Z4, Z4
	VMOVD     AX, X4
	VPXORQ    Z4, Z0, Z0
	ADDQ      $256, SI
	SUBQ      $256, CX

loop256:
	CMPQ       CX, $256
	JB         four
	VMOVDQU64  (SI), Z12
	VMOVDQU64  64(SI), Z13
	VMOVDQU64  128(SI), Z14
	VMOVDQU64  192(SI), Z15
	VPCLMULQDQ $0x00, Z8, Z0, Z4
	VPCLMULQDQ $0x11, Z8, Z0, Z0
	VPCLMULQDQ $0x00, Z8, Z1, Z5
	VPCLMULQDQ $0x11, Z8, Z1, Z1
	VPCLMULQDQ $0x00, Z8, Z2, Z6
	VPCLMULQDQ $0x11, Z8, Z2, Z2
	VPCLMULQDQ $0x00, Z8, Z3, Z7
	VPCLMULQDQ $0x11, Z8, Z3, Z3
	VPTERNLOGD $0x96, Z12, Z4, Z0
	VPTERNLOGD $0x96, Z13, Z5, Z1
	VPTERNLOGD $0x96, Z14, Z6, Z2
	VPTERNLOGD $0x96, Z15, Z7, Z3
	ADDQ       $256, SI
	SUBQ       $256, CX
	JMP        loop256

four:
	// Z0 into Z1, Z1 into Z2, Z2 into Z3: each 64 bytes on.
	VPCLMULQDQ $0x00, Z9, Z0, Z4
	VPCLMULQDQ $0x11, Z9, Z0, Z0
	VPTERNLOGD $0x96, Z4, Z0, Z1
	VPCLMULQDQ $0x00, Z9, Z1, Z4
	VPCLMULQDQ $0x11, Z9, Z1, Z1
	VPTERNLOGD $0x96, Z4, Z1, Z2
	VPCLMULQDQ $0x00, Z9, Z2, Z4
	VPCLMULQDQ $0x11, Z9, Z2, Z2
	VPTERNLOGD $0x96, Z4, Z2, Z3

loop64:
	CMPQ       CX, $64
	JB         done
	VMOVDQU64  (SI), Z12
	VPCLMULQDQ $0x00, Z9, Z3, Z4
	VPCLMULQDQ $0x11, Z9, Z3, Z3
	VPTERNLOGD $0x96, Z12, Z4, Z3
	ADDQ       $64, SI
	SUBQ       $64, CX
	JMP        loop64

done:
	VMOVDQU64 Z3, (SP)
	JMP       end

// Not wide (AVX2 and VPCLMULQDQ, no AVX-512): the same in 256-bit
// registers. Y0-Y7 hold the state, 8 x 32 bytes, the same 256 bytes as
// Z0-Z3; Y8 and Y9 the multipliers for 256 and 64 bytes (k[0:4] and k[8:12], the
// pair for each 128-bit lane). The state is folded into 64 bytes, Y6 and
// Y7 (each register 64 bytes on: Y0 into Y2, Y1 into Y3, and so on), as
// is each 64 bytes left of p; those and the last under 64 bytes go
// through the CRC32 instruction as Z3's do (end).
avx2:
	VMOVDQU (DX), Y8
	VMOVDQU 64(DX), Y9
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	VMOVDQU 128(SI), Y4
	VMOVDQU 160(SI), Y5
	VMOVDQU 192(SI), Y6
	VMOVDQU 224(SI), Y7
	VMOVD   AX, X10
	VPXOR   Y10, Y0, Y0
	ADDQ    $256, SI
	SUBQ    $256, CX

avx2loop256:
	CMPQ       CX, $256
	JB         avx2eight
	VPCLMULQDQ $0x00, Y8, Y0, Y10
	VPCLMULQDQ $0x11, Y8, Y0, Y0
	VPCLMULQDQ $0x00, Y8, Y1, Y11
	VPCLMULQDQ $0x11, Y8, Y1, Y1
	VPCLMULQDQ $0x00, Y8, Y2, Y12
	VPCLMULQDQ $0x11, Y8, Y2, Y2
	VPCLMULQDQ $0x00, Y8, Y3, Y13
	VPCLMULQDQ $0x11, Y8, Y3, Y3
	VPXOR      Y10, Y0, Y0
	VPXOR      (SI), Y0, Y0
	VPXOR      Y11, Y1, Y1
	VPXOR      32(SI), Y1, Y1
	VPXOR      Y12, Y2, Y2
	VPXOR      64(SI), Y2, Y2
	VPXOR      Y13, Y3, Y3
	VPXOR      96(SI), Y3, Y3
	VPCLMULQDQ $0x00, Y8, Y4, Y14
	VPCLMULQDQ $0x11, Y8, Y4, Y4
	VPCLMULQDQ $0x00, Y8, Y5, Y15
	VPCLMULQDQ $0x11, Y8, Y5, Y5
	VPCLMULQDQ $0x00, Y8, Y6, Y10
	VPCLMULQDQ $0x11, Y8, Y6, Y6
	VPCLMULQDQ $0x00, Y8, Y7, Y11
	VPCLMULQDQ $0x11, Y8, Y7, Y7
	VPXOR      Y14, Y4, Y4
	VPXOR      128(SI), Y4, Y4
	VPXOR      Y15, Y5, Y5
	VPXOR      160(SI), Y5, Y5
	VPXOR      Y10, Y6, Y6
	VPXOR      192(SI), Y6, Y6
	VPXOR      Y11, Y7, Y7
	VPXOR      224(SI), Y7, Y7
	ADDQ       $256, SI
	SUBQ       $256, CX
	JMP        avx2loop256

avx2eight:
	// Y0 into Y2 and Y1 into Y3, then on to Y4 and Y5, then Y6 and Y7:
	// each 64 bytes on.
	VPCLMULQDQ $0x00, Y9, Y0, Y10
	VPCLMULQDQ $0x11, Y9, Y0, Y0
	VPCLMULQDQ $0x00, Y9, Y1, Y11
	VPCLMULQDQ $0x11, Y9, Y1, Y1
	VPXOR      Y10, Y0, Y0
	VPXOR      Y0, Y2, Y2
	VPXOR      Y11, Y1, Y1
	VPXOR      Y1, Y3, Y3
	VPCLMULQDQ $0x00, Y9, Y2, Y10
	VPCLMULQDQ $0x11, Y9, Y2, Y2
	VPCLMULQDQ $0x00, Y9, Y3, Y11
	VPCLMULQDQ $0x11, Y9, Y3, Y3
	VPXOR      Y10, Y2, Y2
	VPXOR      Y2, Y4, Y4
	VPXOR      Y11, Y3, Y3
	VPXOR      Y3, Y5, Y5
	VPCLMULQDQ $0x00, Y9, Y4, Y10
	VPCLMULQDQ $0x11, Y9, Y4, Y4
	VPCLMULQDQ $0x00, Y9, Y5, Y11
	VPCLMULQDQ $0x11, Y9, Y5, Y5
	VPXOR      Y10, Y4, Y4
	VPXOR      Y4, Y6, Y6
	VPXOR      Y11, Y5, Y5
	VPXOR      Y5, Y7, Y7

avx2loop64:
	CMPQ       CX, $64
	JB         avx2done
	VPCLMULQDQ $0x00, Y9, Y6, Y10
	VPCLMULQDQ $0x11, Y9, Y6, Y6
	VPCLMULQDQ $0x00, Y9, Y7, Y11
	VPCLMULQDQ $0x11, Y9, Y7, Y7
	VPXOR      Y10, Y6, Y6
	VPXOR      (SI), Y6, Y6
	VPXOR      Y11, Y7, Y7
	VPXOR      32(SI), Y7, Y7
	ADDQ       $64, SI
	SUBQ       $64, CX
	JMP        avx2loop64

avx2done:
	VMOVDQU Y6, (SP)
	VMOVDQU Y7, 32(SP)

end:
	VZEROUPPER
	XORL      AX, AX
	CRC32Q    (SP), AX
	CRC32Q    8(SP), AX
	CRC32Q    16(SP), AX
	CRC32Q    24(SP), AX
	CRC32Q    32(SP), AX
	CRC32Q    40(SP), AX
	CRC32Q    48(SP), AX
	CRC32Q    56(SP), AX

tail8:
	CMPQ   CX, $8
	JB     tail1
	CRC32Q (SI), AX
	ADDQ   $8, SI
	SUBQ   $8, CX
	JMP    tail8

tail1:
	TESTQ  CX, CX
	JZ     ret
	CRC32B (SI), AX
	INCQ   SI
	DECQ   CX
	JMP    tail1

ret:
	MOVL AX, ret+48(FP)
	RET
