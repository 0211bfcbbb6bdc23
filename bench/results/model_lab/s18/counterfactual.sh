#!/usr/bin/env bash
# counterfactual: each quiet run's prediction with its own figures and with the WAN bandwidth set to W.
# Usage (from the repository root): G=path/to/gocoll [W=97.3e6] bash bench/results/model_lab/s18/counterfactual.sh
# (W: the WAN bandwidth put in each run's file: the median of the quiet sweep's figures from runs whose probe used all 4 links)
G=${G:-gocoll}; W=${W:-97.3e6}; D=${D:-bench/results/quiet-20261205-2300/model_sweep}
tbl=$D/table.md
printf "| size | algo | mean | probe WAN MB/s | predicted | mean/pred | pred at %s | mean/pred there | median/pred there |\n|---|---|---|---|---|---|---|---|---|\n" "$W"
for f in $D/raw/*.topo.json; do
  b=$(basename $f .topo.json); a=$(echo $b | cut -d. -f2); s=$(echo $b | cut -d. -f3)
  [[ $a == auto || $a == recursive-doubling ]] && continue
  bytes=$(awk -v s="$s" 'BEGIN { m = 1; u = substr(s, length(s)); if (u == "K") m = 2^10; else if (u == "M") m = 2^20; if (m > 1) s = substr(s, 1, length(s) - 1); printf "%d", s * m }')
  row=$(awk -F'|' -v s="$s" -v a="$a" '$2 ~ "^ "s" $" && $3 ~ "^ "a" $" {print}' $tbl)
  mean=$(echo "$row" | awk -F'|' '{print $5}'); med=$(echo "$row" | awk -F'|' '{print $7}'); pred=$(echo "$row" | awk -F'|' '{print $8}')
  chunk=$(sed -n 's/^\[rank 0\] .*msg="gocoll: transport per peer".* chunk=\([0-9.]*\)MiB.*/\1/p' ${f%.topo.json}.txt | head -1); chunk=$(awk -v c="${chunk:-0.5}" 'BEGIN { printf "%d", c * 1048576 }')
  python3 -c "
import json; d=json.load(open('$f')); d['levels']['wan']['bandwidth']=$W; json.dump(d,open('${TMPDIR:-/tmp}/cf.topo.json','w'))"
  wan=$(python3 -c "import json; print('%.1f'%(json.load(open('$f'))['levels']['wan']['bandwidth']/1e6))")
  p2=$($G topo --explain $bytes --topology ${TMPDIR:-/tmp}/cf.topo.json --coll allreduce --chunk $chunk | awk -v a="$a" '$1 == a { sub(/ *\(chosen.*$/, ""); t = $NF; v = t + 0; if (t ~ /ms$/) v /= 1e3; else if (t ~ /µs$/) v /= 1e6; else if (t ~ /ns$/) v /= 1e9; print v; exit }')
  sec() { awk -v t="$1" 'BEGIN { v = t + 0; if (t ~ /ms/) v /= 1e3; else if (t ~ /us/) v /= 1e6; print v }'; }
  ms=$(sec "$mean"); mds=$(sec "$med")
  printf "| %s | %s | %s | %s | %s | %.2f | %.4g ms | %.2f | %.2f |\n" $s $a "$mean" $wan "$pred" $(awk -v m=$ms -v p="$(sec "$pred")" 'BEGIN{print m/p}') $(awk -v p=$p2 'BEGIN{print p*1e3}') $(awk -v m=$ms -v p=$p2 'BEGIN{print m/p}') $(awk -v m=$mds -v p=$p2 'BEGIN{print m/p}')
done
