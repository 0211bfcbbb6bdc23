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

// func storeLoadFence()
//
// A locked read-modify-write of this goroutine's own stack word (adding
// nothing): a full barrier, so every earlier store is visible before any
// later load runs.
TEXT ·storeLoadFence(SB), NOSPLIT, $0-0
	LOCK
	ORQ $0, 0(SP)
	RET
