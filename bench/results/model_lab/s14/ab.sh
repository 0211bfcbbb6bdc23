#!/usr/bin/env bash
# ab.sh DIR: per raw run, mean / predicted with the CPU term and
# without it (the same topology file, gocoll topo --no-cpu).
G=${G:?set G to a gocoll binary of this tree}
for raw in "$1"/raw/*.txt; do
  topo=${raw%.txt}.topo.json
  [[ -f $topo ]] || continue
  b=$(basename "$raw" .txt); a=$(echo "$b" | cut -d. -f2); s=$(echo "$b" | cut -d. -f3); r=$(echo "$b" | cut -d. -f4)
  bytes=$(awk -v s="$s" 'BEGIN { m = 1; u = substr(s, length(s)); if (u == "K") m = 2^10; else if (u == "M") m = 2^20; if (m > 1) s = substr(s, 1, length(s) - 1); printf "%d", s * m }')
  chunk=$(sed -n 's/^\[rank 0\] .*msg="gocoll: transport per peer".* chunk=\([0-9.]*\)MiB.*/\1/p' "$raw" | head -1)
  chunk=$(awk -v c="${chunk:-0.5}" 'BEGIN { printf "%d", c * 1048576 }')
  sec() { awk -v a="$1" '$1 == a { t = $NF; if (t == "(chosen)") t = $(NF - 1); v = t + 0; if (t ~ /ms$/) v /= 1e3; else if (t ~ /µs$/) v /= 1e6; else if (t ~ /ns$/) v /= 1e9; print v; exit }'; }
  with=$("$G" topo --explain "$bytes" --topology "$topo" --coll allreduce --chunk "$chunk" | sec "$a")
  without=$("$G" topo --explain "$bytes" --topology "$topo" --coll allreduce --chunk "$chunk" --no-cpu | sec "$a")
  mean=$(awk -v s="$bytes" '$1 == "[rank" && $2 == "0]" && $3 == s { print $8 }' "$raw" | tail -1)
  med=$(sed -n "s/^\[rank 0\] .*op=[Aa]ll[Rr]educe algo=[^ ]* bytes=$bytes took=\([^ ]*\).*/\1/p" "$raw" | awk '{ t = $1; v = t + 0; if (t ~ /ms$/) v /= 1e3; else if (t ~ /µs$/) v /= 1e6; else if (t ~ /ns$/) v /= 1e9; print v }' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  load=$(sed -n 's/.*load before: \([0-9.]*\).*/\1/p' "$raw" | head -1)
  awk -v s="$s" -v a="$a" -v r="$r" -v l="$load" -v m="$mean" -v md="$med" -v w="$with" -v wo="$without" 'BEGIN {
    printf "%-4s %-12s r%s load %5s  mean %8.2f ms median %8.2f ms  pred %8.2f / %8.2f ms (CPU term / none)  mean/pred %.2f / %.2f  median/pred %.2f / %.2f\n",
      s, a, r, l, m / 1e3, md * 1e3, w * 1e3, wo * 1e3, m / 1e6 / w, m / 1e6 / wo, md / w, md / wo }'
done
