# each variant: name|instr;instr;... (one iteration); %n numbered dest regs
echo '#include "textflag.h"' >p_amd64.s
echo 'package main' >fns.go
names=""
while IFS='|' read -r name ins; do
  f=tp_$name
  { echo "TEXT ·$f(SB), NOSPLIT, \$0-16"; echo "  MOVQ n+0(FP), CX"; echo "  MOVQ p+8(FP), AX"; echo "  VPXOR Y0, Y0, Y0"; echo "  VPXOR Y1, Y1, Y1"; echo "loop:"
    IFS=';' read -ra arr <<<"$ins"; for i in "${arr[@]}"; do echo "  $i"; done
    echo "  DECQ CX"; echo "  JNZ loop"; echo "  VZEROUPPER"; echo "  RET"; } >>p_amd64.s
  echo "func $f(n int, p *byte)" >>fns.go
  names="$names {\"$f\", $f},"
done <"${LIST:-list.txt}"
echo "var fns = []struct{name string; f func(int, *byte)}{ $names }" >>fns.go
