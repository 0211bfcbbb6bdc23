//go:build !race

#include "textflag.h"

// func streamCopy16(dst, src *byte, n int)
//
// Copies n bytes (a multiple of 64, dst 16-byte aligned) with
// non-temporal stores (MOVNTDQ, SSE2: every amd64 has it), then SFENCE:
// the stores are weakly ordered, and the fence puts them before every
// later store, the slot's publish among them.
TEXT ·streamCopy16(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JZ done
loop:
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	MOVNTO X0, 0(DI)
	MOVNTO X1, 16(DI)
	MOVNTO X2, 32(DI)
	MOVNTO X3, 48(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $64, CX
	JNZ loop
done:
	SFENCE
	RET
