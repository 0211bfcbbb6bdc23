#!/usr/bin/env bash
# cpu.sh DIR: per raw run, the model's CPU per call (explain's CPU
# column) against the measured CPU per call, and predicted vs mean.
G=${G:?set G to a gocoll binary of this tree}
for raw in "$1"/raw/*.txt; do
  topo=${raw%.txt}.topo.json
  [[ -f $topo ]] || continue
  b=$(basename "$raw" .txt); a=$(echo "$b" | cut -d. -f2); s=$(echo "$b" | cut -d. -f3); r=$(echo "$b" | cut -d. -f4)
  bytes=$(awk -v s="$s" 'BEGIN { m = 1; u = substr(s, length(s)); if (u == "K") m = 2^10; else if (u == "M") m = 2^20; if (m > 1) s = substr(s, 1, length(s) - 1); printf "%d", s * m }')
  chunk=$(sed -n 's/^\[rank 0\] .*msg="gocoll: transport per peer".* chunk=\([0-9.]*\)MiB.*/\1/p' "$raw" | head -1)
  chunk=$(awk -v c="${chunk:-0.5}" 'BEGIN { printf "%d", c * 1048576 }')
  line=$("$G" topo --explain "$bytes" --topology "$topo" --coll allreduce --chunk "$chunk" | awk -v a="$a" '$1 == a')
  k=$(grep -c "^\[rank 0\] .*op=[Aa]ll[Rr]educe .* bytes=$bytes " "$raw")
  cpu=$(awk -v k="$k" '$1 == "#" && $2 == "cpu" { if (k > 0) printf "%.4g", ($3 + $4) / k }' "$raw")
  mean=$(awk -v s="$bytes" '$1 == "[rank" && $2 == "0]" && $3 == s { print $8 }' "$raw" | tail -1)
  load=$(sed -n 's/.*load before: \([0-9.]*\).*/\1/p' "$raw" | head -1)
  echo "$s $a r$r load=$load mean=${mean}us calls=$k cpu/call=${cpu}s | $line"
done
