#!/usr/bin/env bash
# uops_probe.sh: throughput and latency of single AVX-512 instructions on
# this CPU, in thread CPU time (no PMU in the KVM guests these sessions
# run on). Each tp_X loop issues 12 independent copies of X (sources fixed,
# 12 destinations), each lat_X loop a chain of 12 dependent ones; figures
# are in units of lat_paddd's time per instruction, which is the latency
# of VPADDD zmm: one cycle on Intel cores, two on AMD Zen 5 (so there
# divide by 2 for cycles). FILTER keeps the lines whose name holds it.
#
#   bash bench/uops_probe.sh [FILTER]
#
# Used for bench/results/kernels_fp8.md (session 17). Go's assembler lacks
# AVX-512 BF16 and FP16, so they are not listed. ISA=avx2 measures AVX2
# instructions on ymm registers instead (CPUs without AVX-512; the unit is
# then VPADDD ymm's latency, one cycle on Intel and AMD Zen 3).
set -euo pipefail
ISA=${ISA:-avx512}
dir=$(mktemp -d /tmp/uopsprobe.XXXXXX)
trap 'rm -rf "$dir"' EXIT
if [ "$ISA" = avx2 ]; then
	cat >"$dir/list.txt" <<'L'
paddd|VPADDD Y0, Y1, %D
paddw|VPADDW Y0, Y1, %D
pand|VPAND Y0, Y1, %D
psrlw|VPSRLW $3, Y0, %D
pslld|VPSLLD $3, Y0, %D
pshufb|VPSHUFB Y0, Y1, %D
pblendw|VPBLENDW $0xaa, Y0, Y1, %D
pblendvb|VPBLENDVB Y0, Y1, Y0, %D
pminub|VPMINUB Y0, Y1, %D
pcmpeqb|VPCMPEQB Y0, Y1, %D
pmaddubsw|VPMADDUBSW Y0, Y1, %D
pmullw|VPMULLW Y0, Y1, %D
pmulld|VPMULLD Y0, Y1, %D
pmuludq|VPMULUDQ Y0, Y1, %D
addps|VADDPS Y0, Y1, %D
mulps|VMULPS Y0, Y1, %D
minps|VMINPS Y0, Y1, %D
cmpps|VCMPPS $3, Y0, Y1, %D
cvtph2ps|VCVTPH2PS X0, %D
cvtps2ph|VCVTPS2PH $3, Y0, X@
cvtps2phm|VCVTPS2PH $3, Y0, (AX)
cvtph2psm|VCVTPH2PS (AX), %D
extracti128|VEXTRACTI128 $1, Y0, X@
inserti128|VINSERTI128 $1, X0, Y1, %D
permq|VPERMQ $0xd8, Y0, %D
packuswb|VPACKUSWB Y0, Y1, %D
ptest|VPTEST Y0, Y1
L
else
	cat >"$dir/list.txt" <<'L'
paddd|VPADDD Z0, Z1, %D
permb|VPERMB Z0, Z1, %D
permi2b|VPERMI2B Z0, Z1, %D
permt2b|VPERMT2B Z0, Z1, %D
permw|VPERMW Z0, Z1, %D
permi2w|VPERMI2W Z0, Z1, %D
pshufb|VPSHUFB Z0, Z1, %D
gf2p8|VGF2P8AFFINEQB $0, Z0, Z1, %D
pmovzxbd|VPMOVZXBD X0, %D
pmovzxbw|VPMOVZXBW Y0, %D
pmovsxbd|VPMOVSXBD X0, %D
pmovdb|VPMOVDB Z0, X@
pmovwb|VPMOVWB Z0, Y@
cvtph2ps|VCVTPH2PS Y0, %D
cvtps2ph|VCVTPS2PH $0, Z0, Y@
addps|VADDPS Z0, Z1, %D
mulps|VMULPS Z0, Z1, %D
ternlog|VPTERNLOGD $0x96, Z0, Z1, %D
minub|VPMINUB Z0, Z1, %D
blendmb|VPBLENDMB Z0, Z1, K1, %D
pcmpub|VPCMPUB $1, Z0, Z1, K@
psrlw|VPSRLW $3, Z0, %D
pslld|VPSLLD $3, Z0, %D
psrlvw|VPSRLVW Z0, Z1, %D
psllvd|VPSLLVD Z0, Z1, %D
unpcklbw|VPUNPCKLBW Z0, Z1, %D
packuswb|VPACKUSWB Z0, Z1, %D
multishift|VPMULTISHIFTQB Z0, Z1, %D
shldw|VPSHLDW $3, Z0, Z1, %D
plzcntd|VPLZCNTD Z0, %D
pmaddubsw|VPMADDUBSW Z0, Z1, %D
cvtdq2ps|VCVTDQ2PS Z0, %D
rndscaleps|VRNDSCALEPS $0x30, Z0, %D
rangeps|VRANGEPS $0x02, Z0, Z1, %D
getexpps|VGETEXPPS Z0, %D
scalefps|VSCALEFPS Z0, Z1, %D
addpsrn|VADDPS.RZ_SAE Z0, Z1, %D
gathdd|VPGATHERDD (AX)(Z0*1), K@, %D
L
fi
cd "$dir"
echo '#include "textflag.h"' >p_amd64.s
echo 'package main' >fns.go
names=""
while IFS='|' read -r name ins; do
	for mode in tp lat; do
		f=${mode}_$name
		{
			echo "TEXT ·$f(SB), NOSPLIT, \$0-16"
			echo "  MOVQ n+0(FP), CX"
			echo "  MOVQ p+8(FP), AX"
			if [ "$ISA" = avx2 ]; then
				echo "  VPXOR Y0, Y0, Y0"
				echo "  VPXOR Y1, Y1, Y1"
			else
				echo "  VPXORD Z0, Z0, Z0"
				echo "  VPXORD Z1, Z1, Z1"
				echo "  KXNORQ K1, K1, K1"
			fi
			echo "loop:"
			for i in $(seq 2 13); do
				r=Z
				if [ "$ISA" = avx2 ]; then r=Y; fi
				if [ $mode = tp ]; then d="$r$i"; x=$i; else d="${r}2"; x=2; fi
				line=${ins//%D/$d}
				if [ $mode = lat ]; then line=${line//Z1,/Z2,}; line=${line//Z0,/Z2,}; line=${line//X0,/X2,}; line=${line//Y0,/Y2,}; line=${line//Y1,/Y2,}; fi
				line=${line//X@/X$x}
				line=${line//Y@/Y$x}
				if [[ $ins == *K@* ]]; then line=${line//K@/K$(((i % 6) + 2))}; fi
				if [[ $ins == *GATHER* ]]; then echo "  KXNORQ K$(((i % 6) + 2)), K$(((i % 6) + 2)), K$(((i % 6) + 2))"; fi
				echo "  $line"
			done
			echo "  DECQ CX"
			echo "  JNZ loop"
			echo "  VZEROUPPER"
			echo "  RET"
		} >>p_amd64.s
		echo "func $f(n int, p *byte)" >>fns.go
		names="$names {\"$f\", $f},"
	done
done <list.txt
echo "var fns = []struct{name string; f func(int, *byte)}{ $names }" >>fns.go
cat >main.go <<'G'
package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"unsafe"
)

func tcpu() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0) // CLOCK_THREAD_CPUTIME_ID
	return ts.Nano()
}

func main() {
	buf := make([]byte, 1<<20)
	const n = 200000
	meas := func(f func(int, *byte)) float64 {
		best := 1e18
		for range 15 {
			t := tcpu()
			f(n, &buf[0])
			best = min(best, float64(tcpu()-t))
		}
		return best / n / 12 // ns per instruction
	}
	var unit float64
	for _, e := range fns {
		if e.name == "lat_paddd" {
			unit = meas(e.f)
		}
	}
	fmt.Printf("lat_paddd = %.4f ns\n", unit)
	for _, e := range fns {
		if len(os.Args) > 1 && !strings.Contains(e.name, os.Args[1]) {
			continue
		}
		fmt.Printf("%-22s %6.2f\n", e.name, meas(e.f)/unit)
	}
}
G
printf 'module uprobe\n\ngo 1.26\n' >go.mod
go build -o uprobe . && ./uprobe "${1:-}"
