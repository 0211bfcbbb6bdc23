//go:build !race

#include "textflag.h"

// func storeRelease(p *uint64, v uint64)
//
// A plain MOV: under x86-TSO a store is a release store (it becomes
// visible after every earlier store of this thread), and unlike Go's
// atomic Store (XCHG) it does not wait for its cache line to be owned.
TEXT ·storeRelease(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ v+8(FP), BX
	MOVQ BX, 0(AX)
	RET
