#!/usr/bin/env bash
# cpu_split.sh: model28's measure of the job's CPU a call without its
# set-up: the same job (AllReduce SIZE, ALGO forced, out of and in place)
# with N1 and N2 timed calls (-w 0), back to back; (CPU(N2) - CPU(N1)) /
# (2 (N2 - N1)) is the CPU of one call, all 8 ranks (/usr/bin/time's user
# + system of the launcher's tree). Each run dumps its probe's figures, so
# the model's CPU for the call (lone and busy priced) comes from the same
# runs. Needs the lab LAB up (gocoll lab up) and root.
# LAB=model28b G=BIN OUT=DIR SIZES="4M 256M" ALGOS="ring tree hierarchical" bash THIS
set -euo pipefail
LAB=${LAB:-model28b} G=${G:?} OUT=${OUT:?}
SIZES=${SIZES:-4M 256M} ALGOS=${ALGOS:-ring tree hierarchical}
mkdir -p "$OUT"
hosts=$(mktemp); "$G" lab hostfile --name "$LAB" --slots 2 >"$hosts"
for s in $SIZES; do
  b=$(awk -v s="$s" 'BEGIN { m = 1; u = substr(s, length(s)); if (u == "K") m = 2^10; else if (u == "M") m = 2^20; if (m > 1) s = substr(s, 1, length(s) - 1); printf "%d", s * m }')
  if ((b > 16 << 20)); then ns="1 3"; else ns="5 25"; fi
  for a in $ALGOS; do
    for n in $ns; do
      raw=$OUT/$a.$s.n$n.txt
      echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$raw"
      /usr/bin/time -f '# cpu %U %S %e' -o "$raw.time" "$G" run --hostfile "$hosts" --rsh 'ip netns exec {host}' --timeout 600s \
        -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL,INIT -x GOCOLL_TOPO_DUMP="${raw%.txt}.topo.json" -- \
        "$G" bench allreduce --sizes "$b" -n "$n" -w 0 -c 0 --algo "$a" >>"$raw" 2>&1 || echo "# run failed: $?" >>"$raw"
      cat "$raw.time" >>"$raw"; rm -f "$raw.time"
      echo "$s $a n=$n: $(tail -1 "$raw") $(head -1 "$raw")" >&2
    done
  done
done
rm -f "$hosts"
