#!/bin/bash
# repredict.sh OUTDIR BASE NEW (gocoll binaries; session 20: builds of 077b9a0 and 1f7b2e2): per cell, the table's mean against the base and new binaries' predictions on
# the run's own file (reduce_per_byte stripped for the base binary, which does not know the key)
d=$1; B=${2:?base gocoll}; N=${3:?new gocoll}
stamp=$(ls $d/raw/*.topo.json | head -1 | xargs basename | cut -d. -f1)
sec() { awk '{t=$1; v=t+0; if (t ~ /ms$/) v/=1e3; else if (t ~ /µs$/ || t ~ /us$/) v/=1e6; else if (t ~ /ns$/) v/=1e9; print v}'; }
pred() { "$1" topo --explain "$3" --topology "$2" --coll allreduce --chunk 2097152 | awk -v a="$4" '$1 == a { sub(/ *\(chosen.*$/, ""); print $NF; exit }' | sec; }
chosen() { "$1" topo --explain "$3" --topology "$2" --coll allreduce --chunk 2097152 | awk '/chosen/{print $1}'; }
printf "| size | algorithm | mean | base predicted | mean/base | new predicted | mean/new | base chooses | new chooses |\n|---|---|---|---|---|---|---|---|---|\n"
for s in 8 64K 4M 256M; do for a in hierarchical ring tree auto; do
  f=$d/raw/$stamp.$a.$s.1.topo.json; [ -f $f ] || continue
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("reduce_per_byte",None); json.dump(d,open(sys.argv[2],"w"))' $f "${TMPDIR:-/tmp}/repredict.$$.json"
  mean=$(awk -F'|' -v s=$s -v a=$a '$2 ~ "^ *"s" *$" && $3 ~ "^ *"a" *$" {print $5; exit}' $d/table.md | sed 's/^ *//; s/ *$//; s/ //')
  m=$(echo "$mean" | sec)
  alg=$a; [ $a = auto ] && alg=$(awk -F'|' -v s=$s '$2 ~ "^ *"s" *$" && $3 ~ "auto" {print $4; exit}' $d/table.md | awk '{print $1}')
  b=$(pred $B "${TMPDIR:-/tmp}/repredict.$$.json" $s $alg); n=$(pred $N $f $s $alg)
  printf "| %s | %s | %s | %.4g | %.2f | %.4g | %.2f | %s | %s |\n" $s "$a${alg:+ ($alg)}" "$mean" $b $(echo "$m $b" | awk '{printf "%.2f", $1/$2}') $n $(echo "$m $n" | awk '{printf "%.2f", $1/$2}') $(chosen $B "${TMPDIR:-/tmp}/repredict.$$.json" $s) $(chosen $N $f $s)
done; done
