#!/usr/bin/env bash
# fp8_bound.sh: the floor of an fp8 sum computed in float32 on this CPU, in
# thread CPU time (bench/kernel_probe.sh's method), beside float32 Sum and
# the generated e4m3 sum kernels of the work tree, called in turn in one
# process, in place (acc = acc + in) over SIZE bytes.
#
# boundF32 does only the steps no float32 formulation avoids, per 64 bytes:
# load a and b; widen each exactly to float32 (two VPERMI2B 128-entry byte
# tables give the upper and lower byte of the value's bfloat16, a
# VPTERNLOG puts the sign back, VPUNPCKL/HBW and four VPUNPCKL/HWD make
# the four float32 vectors); four VADDPS; narrow without rounding (two
# VPERMT2W take the upper words, one VPERMT2B a byte of each); store. It
# computes no correct fp8 result (no rounding, no saturation, no NaN) and
# is only a speed limit: the fastest float32 route there can be.
#
# boundBytes is the instruction mix of a formulation on bytes (64 lanes a
# vector) with 128-entry tables, as sketched in
# bench/results/kernels_fp8.md (session 17): 7 VPERMI2B, 4 register
# copies, 15 single-uop integer ops (AND, MAX/MIN, saturating subtract,
# adds, VPBLENDMB, VPTERNLOG) and one compare into an opmask per 64 bytes,
# with the data dependences of that sketch; its result bytes mean nothing.
#
#   SIZE=262144 CALLS=50 ROUNDS=40 bash bench/fp8_bound.sh
#
# From the repository root, on amd64 with AVX-512 VBMI (and GFNI for the
# generated kernels named in KERNELS, default those of this CPU's levels).
#
# ISA=avx2 measures floors for CPUs without AVX-512 instead (boundF16C,
# boundF16CMem, boundF32, boundF32Mul, boundGather, boundInt16: one per
# route, each described at its loop below) beside the AVX2 float32 Sum
# and fp8 sums; issue 17's target, 0.5x float32 Sum at 256 KiB, is 22
# GB/s on AMD Zen 3 (4.7 cycles per 32 bytes at 3.24 GHz), and every
# route needs at least 26 vector instructions per 32 bytes (4 a cycle at
# best there: >= 6.5 cycles). The floors time what each route cannot do
# without (its widening, arithmetic and narrowing), nothing more.
set -euo pipefail
ISA=${ISA:-avx512}
default=(sumFloat32AVX512 sumFloat8E4M3AVX512GFNI sumFloat8E5M2AVX512GFNI)
bounds=(boundF32 boundBytes)
if [ "$ISA" = avx2 ]; then
	default=(sumFloat32AVX2 sumFloat8E4M3AVX2 sumFloat8E5M2AVX2)
	bounds=(boundF16C boundF16CMem boundF32 boundF32Mul boundGather boundInt16)
	# the complete floors (complete below): format, op, widening
	completes=("E4M3 Sum shift" "E4M3 Sum mul" "E4M3 Prod shift" "E4M3 Prod mul" "E5M2 Sum shift" "E5M2 Sum mul" "E5M2 Prod shift" "E5M2 Prod mul")
	for c in "${completes[@]}"; do
		read -r fmt op widen <<<"$c"
		n="c$fmt$op"
		if [ "$widen" = mul ]; then n=${n}Mul; fi
		bounds+=("$n")
	done
	bounds+=(cE5M2SumF16C cE5M2ProdF16C cE5M2SumF16CPipe cE5M2ProdF16CPipe cE4M3SumF16CPipe)
fi
kernels=${KERNELS:-${default[*]}}
if [ -n "${BOUNDS:-}" ]; then read -r -a bounds <<<"$BOUNDS"; fi # a subset, e.g. at 64 MiB
dir=$(mktemp -d /tmp/fp8bound.XXXXXX)
trap 'rm -rf "$dir"' EXIT
# avx512_bounds and avx2_bounds print the floor loops (Go assembly).
avx512_bounds() {
	cat <<'EOF'
// func boundF32(dst, a, b *byte, n int)
TEXT ·boundF32(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), AX
	MOVQ a+8(FP), CX
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), BX
	MOVQ $·tabs(SB), SI
	VMOVDQU64 0(SI), Z0   // upper bytes, entries 0-63
	VMOVDQU64 64(SI), Z1  // 64-127
	VMOVDQU64 128(SI), Z2 // lower bytes
	VMOVDQU64 192(SI), Z3
	VMOVDQU64 256(SI), Z4 // VPERMT2W: the upper words of two vectors
	VMOVDQU64 320(SI), Z5 // VPERMT2B: a byte of each word of two vectors
	MOVL $0x80808080, DI
	VPBROADCASTD DI, Z6
	VPXORD Z7, Z7, Z7
	XORQ DI, DI
loop:
	VMOVDQU64 (CX)(DI*1), Z8
	VMOVDQU64 (DX)(DI*1), Z9
	VMOVDQA64 Z8, Z10
	VPERMI2B Z1, Z0, Z10
	VPTERNLOGD $0xe4, Z6, Z8, Z10 // Z6 ? a : upper
	VPERMI2B Z3, Z2, Z8
	VPUNPCKLBW Z10, Z8, Z11
	VPUNPCKHBW Z10, Z8, Z12
	VPUNPCKLWD Z11, Z7, Z13
	VPUNPCKHWD Z11, Z7, Z14
	VPUNPCKLWD Z12, Z7, Z15
	VPUNPCKHWD Z12, Z7, Z16
	VMOVDQA64 Z9, Z10
	VPERMI2B Z1, Z0, Z10
	VPTERNLOGD $0xe4, Z6, Z9, Z10
	VPERMI2B Z3, Z2, Z9
	VPUNPCKLBW Z10, Z9, Z11
	VPUNPCKHBW Z10, Z9, Z12
	VPUNPCKLWD Z11, Z7, Z17
	VPUNPCKHWD Z11, Z7, Z18
	VPUNPCKLWD Z12, Z7, Z19
	VPUNPCKHWD Z12, Z7, Z20
	VADDPS Z17, Z13, Z13
	VADDPS Z18, Z14, Z14
	VADDPS Z19, Z15, Z15
	VADDPS Z20, Z16, Z16
	VPERMT2W Z14, Z4, Z13
	VPERMT2W Z16, Z4, Z15
	VPERMT2B Z15, Z5, Z13
	VMOVDQU64 Z13, (AX)(DI*1)
	ADDQ $64, DI
	CMPQ DI, BX
	JB loop
	VZEROUPPER
	RET

// func boundBytes(dst, a, b *byte, n int)
TEXT ·boundBytes(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), AX
	MOVQ a+8(FP), CX
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), BX
	MOVQ $·tabs(SB), SI
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	MOVL $0x7f7f7f7f, DI
	VPBROADCASTD DI, Z6
	MOVL $0x80808080, DI
	VPBROADCASTD DI, Z7
	XORQ DI, DI
loop:
	VMOVDQU64 (CX)(DI*1), Z8
	VMOVDQU64 (DX)(DI*1), Z9
	VPANDD Z6, Z8, Z10
	VPANDD Z6, Z9, Z11
	VPMAXUB Z11, Z10, Z12
	VPMINUB Z11, Z10, Z13
	VMOVDQA64 Z12, Z14
	VPERMI2B Z1, Z0, Z14
	VMOVDQA64 Z13, Z15
	VPERMI2B Z3, Z2, Z15
	VPSUBSB Z15, Z14, Z16
	VPMINUB Z6, Z16, Z16
	VPERMI2B Z1, Z0, Z16
	VMOVDQA64 Z12, Z17
	VPERMI2B Z3, Z2, Z17
	VPADDB Z17, Z16, Z16
	VMOVDQA64 Z16, Z18
	VPERMI2B Z1, Z0, Z18
	VPERMI2B Z3, Z2, Z16
	VPBLENDMB Z18, Z16, K1, Z16
	VMOVDQA64 Z12, Z19
	VPERMI2B Z1, Z0, Z19
	VPADDB Z19, Z16, Z16
	VPMINUB Z6, Z16, Z16
	VPXORD Z8, Z9, Z20
	VPTERNLOGD $0xe4, Z7, Z20, Z16
	VPTERNLOGD $0xe4, Z7, Z8, Z16
	VPCMPEQB Z6, Z12, K2
	VMOVDQU64 Z16, (AX)(DI*1)
	ADDQ $64, DI
	CMPQ DI, BX
	JB loop
	VZEROUPPER
	RET
EOF
}

avx2_bounds() {
	cat bench/testdata/fp8_bound_avx2.s
	for c in "${completes[@]}"; do
		read -r fmt op widen <<<"$c"
		complete "$fmt" "$op" "$widen"
	done
	completeF16C Sum
	completeF16C Prod
	completeF16C Sum pipe
	completeF16C Prod pipe
	completeE4M3F16CPipe
	awk '/^TEXT ·boundF32\(SB\)/, /^\tRET$/' bench/testdata/fp8_bound_avx2.s |
		sed -e 's/boundF32(SB)/boundF32Mul(SB)/' -e 's/f32loop/f32mloop/g' -e 's/VPSLLD \$21, \(Y[0-9]\),/VPMULLD Y13, \1,/'
}

# floorHeader NAME prints a floor loop's TEXT line and its arguments' loads
# (dst AX, a CX, b DX, n BX).
floorHeader() {
	printf '\n// func %s(dst, a, b *byte, n int)\nTEXT ·%s(SB), NOSPLIT, $0-32\n' "$1" "$1"
	printf '\tMOVQ dst+0(FP), AX\n\tMOVQ a+8(FP), CX\n\tMOVQ b+16(FP), DX\n\tMOVQ n+24(FP), BX\n'
}

# complete FMT OP WIDEN prints the complete floor loop of the float32 route
# at AVX2 (name cFMTOP, cFMTOPMul with WIDEN=mul): an fp8 sum or product
# that is correct for inputs without NaN (E4M3) or NaN/Inf (E5M2), 64
# bytes an iteration in two 32-byte bodies. Each byte widens exactly to
# float32 scaled by 2^-120 (E4M3) or 2^-112 (E5M2): VPMOVSXBD from memory,
# VPSLLD 20 or 21 (or VPMULLD by 2^20/2^21), VPAND clearing the exponent's
# upper bits (subnormals become float32 denormals, exact). Sums are exact
# in float32 (VADDPS); a product scales a by 2^120 or 2^112 first (VMULPS)
# and is exact too. Narrowing: the signs by 2 VPACKSSDW and one VPACKSSWB
# of the results' bits (0x80 where negative, -0 included); the magnitudes
# doubled (VPADDD: sign out) and rounded to nearest even at the code's
# last bit (VPSRLD, VPAND 1, two VPADDD), VPSRLD to the code, 2 VPACKUSDW
# and one VPACKUSWB, VPMINUB saturating (E4M3 at 0x7e, E5M2 to Inf 0x7c),
# VPAND/VPOR the signs in, VPERMD into element order. The NaN test as a
# kernel's (per 64 bytes: VPAND a and b by 0x7f, VPMAXUB, a compare,
# VPTEST/JNE to an out-of-line stub that only jumps back: a floor, the
# fix-ups are not done; an E5M2 block holding an Inf (the probe's sums
# reach Inf) costs one taken branch more than it would). 66-70 vector
# instructions per 32 bytes.
complete() {
	local fmt=$1 op=$2 widen=$3 name="c$1$2" sh=20 wm=0 rc=160 sat=224 mul=352 scale=416
	if [ "$widen" = mul ]; then name=${name}Mul; fi
	if [ "$fmt" = E5M2 ]; then sh=21 wm=32 rc=192 sat=256 mul=384 scale=448; fi
	local dsh=$((sh + 1)) lbl=$name
	floorHeader "$name"
	printf '\tMOVQ $·cons(SB), SI\n\tVMOVDQU %d(SI), Y15\n\tVMOVDQU 64(SI), Y14\n\tVMOVDQU 96(SI), Y13\n\tVMOVDQU 128(SI), Y12\n\tXORQ DI, DI\n' "$wm"
	printf '%sloop:\n' "$lbl"
	for o in 0 32; do
		printf '\tVPAND %d(CX)(DI*1), Y13, Y9\n\tVPAND %d(DX)(DI*1), Y13, Y10\n\tVPMAXUB Y10, Y9, Y9\n' $o $o
		if [ $o = 0 ]; then printf '\tVMOVDQA Y9, Y11\n'; else printf '\tVPMAXUB Y9, Y11, Y11\n'; fi
	done
	if [ "$fmt" = E4M3 ]; then printf '\tVPCMPEQB Y13, Y11, Y11\n'; else printf '\tVPCMPGTB 320(SI), Y11, Y11\n'; fi
	printf '\tVPTEST Y11, Y11\n\tJNE %snan\n%sgo:\n' "$lbl" "$lbl"
	for o in 0 32; do
		for i in 0 1 2 3; do printf '\tVPMOVSXBD %d(CX)(DI*1), Y%d\n' $((o + 8 * i)) $i; done
		for i in 0 1 2 3; do printf '\tVPMOVSXBD %d(DX)(DI*1), Y%d\n' $((o + 8 * i)) $((i + 4)); done
		for i in 0 1 2 3 4 5 6 7; do
			if [ "$widen" = mul ]; then printf '\tVPMULLD %d(SI), Y%d, Y%d\n' $mul $i $i; else printf '\tVPSLLD $%d, Y%d, Y%d\n' $sh $i $i; fi
		done
		for i in 0 1 2 3 4 5 6 7; do printf '\tVPAND Y15, Y%d, Y%d\n' $i $i; done
		for i in 0 1 2 3; do
			if [ "$op" = Prod ]; then
				printf '\tVMULPS %d(SI), Y%d, Y%d\n\tVMULPS Y%d, Y%d, Y%d\n' $scale $i $i $((i + 4)) $i $i
			else
				printf '\tVADDPS Y%d, Y%d, Y%d\n' $((i + 4)) $i $i
			fi
		done
		printf '\tVPACKSSDW Y1, Y0, Y4\n\tVPACKSSDW Y3, Y2, Y5\n\tVPACKSSWB Y5, Y4, Y4\n'
		for i in 0 1 2 3; do
			t=$((i + 5))
			printf '\tVPADDD Y%d, Y%d, Y%d\n\tVPSRLD $%d, Y%d, Y%d\n\tVPAND Y12, Y%d, Y%d\n' $i $i $i $dsh $i $t $t $t
			printf '\tVPADDD Y%d, Y%d, Y%d\n\tVPADDD %d(SI), Y%d, Y%d\n\tVPSRLD $%d, Y%d, Y%d\n' $t $i $i $rc $i $i $dsh $i $i
		done
		printf '\tVPACKUSDW Y1, Y0, Y0\n\tVPACKUSDW Y3, Y2, Y2\n\tVPACKUSWB Y2, Y0, Y0\n\tVPMINUB %d(SI), Y0, Y0\n' $sat
		printf '\tVPAND 288(SI), Y4, Y4\n\tVPOR Y4, Y0, Y0\n\tVPERMD Y0, Y14, Y0\n\tVMOVDQU Y0, %d(AX)(DI*1)\n' $o
	done
	printf '\tADDQ $64, DI\n\tCMPQ DI, BX\n\tJB %sloop\n\tVZEROUPPER\n\tRET\n%snan:\n\tJMP %sgo\n' "$lbl" "$lbl" "$lbl"
}

# completeF16C OP prints the complete floor of the F16C route for E5M2
# (cE5M2SumF16C, cE5M2ProdF16C), correct for every input (E5M2 is the
# upper byte of a float16, so NaN and Inf go through the arithmetic), in
# the fastest form measured so far (session 29): a 128-byte block in two
# phases, first each 32-byte body's words (VPUNPCKL/HBW with zero, inputs
# as memory operands) stored to a scratch buffer, then each body's 8
# VCVTPH2PS from there, 4 VADDPS or VMULPS, 4 VCVTPS2PH toward zero, 2
# VINSERTI128, the carry rounding to nearest even on words (VPSRLW,
# VPAND, 2 VPADDW: 4 per 16 elements), VPSRLW 8 and one VPACKUSWB (the
# unpacks' order undone, no permute), store: 37 vector instructions and 4
# scratch stores per 32 bytes, against 41 in today's kernel.
completeF16C() {
	local op=VADDPS name=cE5M2SumF16C
	if [ "$1" = Prod ]; then op=VMULPS name=cE5M2ProdF16C; fi
	if [ "${2:-}" = pipe ]; then name=${name}Pipe; fi
	floorHeader "$name"
	printf '\tMOVQ $·scratch16(SB), SI\n\tLEAQ 512(SI), R9\n\tMOVQ $·cons(SB), R8\n\tVPXOR Y15, Y15, Y15\n\tVMOVDQU 480(R8), Y14\n\tVMOVDQU 512(R8), Y13\n\tXORQ DI, DI\n'
	if [ "${2:-}" = pipe ]; then
		# pipe: each iteration stores the next block's words (to the
		# other buffer, R9) while it converts this block's (SI), each
		# next body's stores emitted before this one's conversions.
		for k in 0 1 2 3; do f16cWiden $k 0 SI; done
		printf '\tSUBQ $128, BX\n\tJZ %slast\n' "$name"
		printf '%sloop:\n' "$name"
		for k in 0 1 2 3; do f16cWiden $k 128 R9; f16cNarrow $k; done
		printf '\tXCHGQ SI, R9\n\tADDQ $128, DI\n\tCMPQ DI, BX\n\tJB %sloop\n%slast:\n' "$name" "$name"
		for k in 0 1 2 3; do f16cNarrow $k; done
		printf '\tVZEROUPPER\n\tRET\n'
		return
	fi
	printf '%sloop:\n' "$name"
	for k in 0 1 2 3; do f16cWiden $k 0 SI; done
	for k in 0 1 2 3; do f16cNarrow $k; done
	printf '\tADDQ $128, DI\n\tCMPQ DI, BX\n\tJB %sloop\n\tVZEROUPPER\n\tRET\n' "$name"
}

# f16cWiden K AHEAD BUF: body K's words, AHEAD bytes on, to buffer BUF.
f16cWiden() {
	local o=$((32 * $1 + $2)) s=$((128 * $1))
	printf '\tVPUNPCKLBW %d(CX)(DI*1), Y15, Y0\n\tVPUNPCKHBW %d(CX)(DI*1), Y15, Y1\n' $o $o
	printf '\tVPUNPCKLBW %d(DX)(DI*1), Y15, Y2\n\tVPUNPCKHBW %d(DX)(DI*1), Y15, Y3\n' $o $o
	printf '\tVMOVDQU Y0, %d(%s)\n\tVMOVDQU Y1, %d(%s)\n\tVMOVDQU Y2, %d(%s)\n\tVMOVDQU Y3, %d(%s)\n' $s $3 $((s + 32)) $3 $((s + 64)) $3 $((s + 96)) $3
}

# f16cHalves K OP: body K's two word vectors' arithmetic from SI (4
# VCVTPH2PS, 2 OP, 2 VCVTPS2PH toward zero, VINSERTI128 each): odd or
# low words in Y8, the others in Y9.
f16cHalves() {
	local h x y
	for h in 0 1; do
		x=$((128 * $1 + 32 * h))
		y=$((x + 64))
		printf '\tVCVTPH2PS %d(SI), Y4\n\tVCVTPH2PS %d(SI), Y5\n\tVCVTPH2PS %d(SI), Y6\n\tVCVTPH2PS %d(SI), Y7\n' $x $((x + 16)) $y $((y + 16))
		printf '\t%s Y6, Y4, Y4\n\t%s Y7, Y5, Y5\n\tVCVTPS2PH $3, Y4, X4\n\tVCVTPS2PH $3, Y5, X5\n\tVINSERTI128 $1, X5, Y4, Y%d\n' $2 $2 $((8 + h))
	done
}

# f16cNarrow K: body K's arithmetic (op is completeF16C's), rounding and
# store.
f16cNarrow() {
	local w
	f16cHalves $1 $op
	for w in 8 9; do
		printf '\tVPSRLW $8, Y%d, Y10\n\tVPAND Y14, Y10, Y10\n' $w
		printf '\tVPADDW Y10, Y%d, Y%d\n\tVPADDW Y13, Y%d, Y%d\n\tVPSRLW $8, Y%d, Y%d\n' $w $w $w $w $w $w
	done
	printf '\tVPACKUSWB Y9, Y8, Y8\n\tVMOVDQU Y8, %d(AX)(DI*1)\n' $((32 * $1))
}

# completeE4M3F16CPipe prints cE4M3SumF16CPipe: today's AVX2 E4M3 sum
# (sumFloat8E4M3AVX2: words by VPMADDUBSW of the signed bytes by 128 and
# bit 14 cleared, float16 of the value times 2^-8; VCVTPH2PS/VADDPS/
# VCVTPS2PH toward zero; narrowE4M3AVX2's carry rounding, saturation and
# signs; the NaN test a block) in completeF16C's pipe form: the next
# block's words and NaN test while this block converts and narrows.
completeE4M3F16CPipe() {
	local name=cE4M3SumF16CPipe k
	floorHeader "$name"
	printf '\tMOVQ $·scratch16(SB), SI\n\tLEAQ 512(SI), R9\n\tMOVQ $·cons(SB), R8\n'
	printf '\tVMOVDQU 576(R8), Y13\n\tVMOVDQU 608(R8), Y14\n\tVMOVDQU 96(R8), Y15\n\tXORQ DI, DI\n'
	for k in 0 1 2 3; do e4m3Widen $k 0 SI; done
	e4m3Test 0
	printf '\tSUBQ $128, BX\n\tJZ %slast\n%sloop:\n' "$name" "$name"
	for k in 0 1 2 3; do e4m3Widen $k 128 R9; e4m3Narrow $k; done
	e4m3Test 1
	printf '\tXCHGQ SI, R9\n\tADDQ $128, DI\n\tCMPQ DI, BX\n\tJB %sloop\n%slast:\n' "$name" "$name"
	for k in 0 1 2 3; do e4m3Narrow $k; done
	printf '\tVZEROUPPER\n\tRET\n'
	for k in 0 1; do printf '%snan%d:\n\tJMP %sgo%d\n' "$name" $k "$name" $k; done
}

# e4m3Widen K AHEAD BUF: body K's four word vectors to BUF, its NaN test
# into Y11.
e4m3Widen() {
	local o=$((32 * $1 + $2)) s=$((128 * $1)) i r
	i=0
	for m in CX DX; do
		for r in 13 14; do
			printf '\tVPMADDUBSW %d(%s)(DI*1), Y%d, Y%d\n\tVPAND 640(R8), Y%d, Y%d\n' $o $m $r $i $i $i
			printf '\tVMOVDQU Y%d, %d(%s)\n' $i $((s + 32 * i)) $3
			i=$((i + 1))
		done
	done
	printf '\tVPAND %d(CX)(DI*1), Y15, Y0\n\tVPAND %d(DX)(DI*1), Y15, Y1\n' $o $o
	if [ "$1" = 0 ]; then printf '\tVPMAXUB Y1, Y0, Y11\n'; else printf '\tVPMAXUB Y1, Y0, Y0\n\tVPMAXUB Y0, Y11, Y11\n'; fi
}

# e4m3Test N: the NaN test of the block widened last (its stub nanN only
# jumps back: a floor).
e4m3Test() {
	printf '\tVPCMPEQB Y15, Y11, Y11\n\tVPTEST Y11, Y11\n\tJNE %snan%d\n%sgo%d:\n' "$name" $1 "$name" $1
}

# e4m3Narrow K: body K's arithmetic from SI, narrowing and store.
e4m3Narrow() {
	f16cHalves $1 VADDPS
	printf '\tVPSRLW $7, Y8, Y10\n\tVPAND 480(R8), Y10, Y10\n\tVPADDW Y8, Y8, Y12\n\tVPOR Y10, Y12, Y12\n\tVPADDW 512(R8), Y12, Y12\n\tVPAND 544(R8), Y12, Y12\n'
	printf '\tVPSRLW $7, Y9, Y10\n\tVPAND 480(R8), Y10, Y10\n\tVPADDW Y9, Y9, Y4\n\tVPOR Y10, Y4, Y4\n\tVPADDW 512(R8), Y4, Y4\n\tVPSRLW $8, Y4, Y4\n'
	printf '\tVPOR Y4, Y12, Y12\n\tVPMINUB 224(R8), Y12, Y12\n'
	printf '\tVPAND Y13, Y8, Y8\n\tVPSRLW $8, Y9, Y9\n\tVPAND Y14, Y9, Y9\n\tVPOR Y9, Y8, Y8\n\tVPOR Y8, Y12, Y12\n'
	printf '\tVMOVDQU Y12, %d(AX)(DI*1)\n' $((32 * $1))
}

{
	echo '#include "textflag.h"'
	for k in $kernels; do
		awk -v name="$k" '/^TEXT / { on = index($0, "TEXT ·" name "(SB)") == 1 } on && !/^(DATA|GLOBL)/' collective/reduce/simd_amd64.s
	done
	grep -h '^DATA\|^GLOBL' collective/reduce/simd_amd64.s
	if [ "$ISA" = avx2 ]; then avx2_bounds; else avx512_bounds; fi
} | awk -v keep=" ${bounds[*]} $kernels " '# only the functions timed (go vet wants each declared)
	/^TEXT / { n = $2; sub(/^·/, "", n); sub(/\(SB\),?$/, "", n); on = index(keep, " " n " ") > 0 }
	/^\/\/ func / { next } # the declarations are in k.go
	on || /^#include|^(DATA|GLOBL)/' >"$dir/k_amd64.s"

# The complete floors' constants (offsets in complete, completeF16C) and
# their check (bench/testdata):
# CHECK=1 runs every complete floor over all pairs of inputs without NaN
# (and Inf) and compares each result with the nearest-even code a
# brute-force search over the format's codes finds.
cp bench/testdata/fp8_bound_cons.go "$dir/cons.go"
cp bench/testdata/fp8_bound_check_test.go "$dir/check_test.go"
printf 'module probe\n\ngo 1.26\n' >"$dir/go.mod"
{
	echo 'package probe'
	echo 'import "math"'
	echo 'var tabs [384]byte'
	echo 'func init() {'
	echo '	for m := range 128 { // E4M3 magnitude m: its value times 2^-8 as bfloat16'
	echo '		e, f := m>>3, float64(m&7)'
	echo '		v := math.Ldexp(f, -9)'
	echo '		if e > 0 { v = math.Ldexp(8+f, e-10) }'
	echo '		w := math.Float32bits(float32(math.Ldexp(v, -8))) >> 16'
	echo '		tabs[m], tabs[128+m] = byte(w>>8), byte(w)'
	echo '	}'
	echo '	for i := range 32 { tabs[256+2*i], tabs[256+2*i+1] = byte(2*i+1), 0 } // odd words of both'
	echo '	for i := range 64 { tabs[320+i] = byte(2*i + 1) } // upper byte of each word'
	echo '}'
	echo 'var scratch [128]byte  // boundF16CMem: the widened words'
	echo 'var pairs [65536 + 4]byte // boundGather: the pair table (zeros: a floor)'
	echo 'var nibbles [96]byte    // boundInt16: three 32-byte tables'
	for f in "${bounds[@]}" $kernels; do printf '\n//go:noescape\nfunc %s(dst, a, b *byte, n int)\n' "$f"; done
	echo 'var funcs = []struct { name string; f func(dst, a, b *byte, n int) }{'
	for f in "${bounds[@]}" $kernels; do printf '\t{"%s", %s},\n' "$f" "$f"; done
	echo '}'
} >"$dir/k.go"
# The timing loop of bench/kernel_probe.sh.
# NOSUB=1: inputs without subnormals of either format (exponent field 0).
sed -n '/^cat >"$dir\/k_test.go" <<.EOF.$/,/^EOF$/p' bench/kernel_probe.sh | sed '1d;$d' |
	sed 's|if x\&0x7f >= 0x7c {|if x\&0x7f >= 0x7c \|\| os.Getenv("NOSUB") != "" \&\& x\&0x78 == 0 {|' >"$dir/k_test.go"
grep -q NOSUB "$dir/k_test.go"
(cd "$dir" && gofmt -w . && go vet . && go test -c -o probe.test .)
echo "# fp8 bound, work tree; load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${CHECK:-}" ]; then CHECK=1 "$dir/probe.test" -test.run Check -test.v | grep -v '^=== RUN'; fi
"$dir/probe.test" -test.run Probe | grep GB/s
echo "# load $(cut -d' ' -f1-3 /proc/loadavg)"
