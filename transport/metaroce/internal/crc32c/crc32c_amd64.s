#include "textflag.h"

// func fold(crc uint32, p []byte, k *[16]uint64) uint32
//
// Z0-Z3 hold the state, 4 x 64 bytes (16 lanes of 16 bytes); Z8 and Z9
// the multipliers for 256 and 64 bytes, the same pair in each 128-bit
// lane: qword 0 for a lane's first 8 bytes, qword 1 for its last 8. A
// fold replaces a lane by the XOR of its two halves' products and the
// lane that far on. The 64 bytes left in Z3 and the last under 64 bytes
// of p then go through the CRC32 instruction from a zero register, by
// way of the frame.
TEXT ·fold(SB), NOSPLIT, $64-44
	MOVL crc+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	MOVQ k+32(FP), DX

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
	MOVL AX, ret+40(FP)
	RET
