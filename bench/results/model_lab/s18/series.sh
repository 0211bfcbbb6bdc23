#!/usr/bin/env bash
# The per-call time series of 4 MiB AllReduces (rank 0's COLL lines) in the lab: do the first calls of a job carry the excess?
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
LAB=${LAB:-model18s}; OUT=${OUT:-${TMPDIR:-/tmp}/series}; N=${N:-40}; SIZE=${SIZE:-4194304}; ALGOS=${ALGOS:-"tree hierarchical ring"}; ROUNDS=${ROUNDS:-2}
PATHS=4 RATE=200 DELAY=2 MTU=9000 HOSTS=2 SLOTS=2
. bench/lab_common.sh
lab_setup series
lab_build
mkdir -p "$OUT"
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site $HOSTS --paths $PATHS --rate $RATE --delay $DELAY --mtu $MTU >/dev/null
"$G" lab hostfile --name "$LAB" --slots $SLOTS >"$BIN/hosts"
for r in $(seq $ROUNDS); do
for a in $ALGOS; do
  raw=$OUT/$a.$SIZE.$r.txt
  echo "# load before $(cut -d' ' -f1-3 /proc/loadavg)" >"$raw"
  "$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 600s -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL,INIT \
    -x GOCOLL_TOPO_DUMP="${raw%.txt}.topo.json" -- "$G" bench allreduce --sizes $SIZE -n $N -w 1 -c 1 --algo $a >>"$raw" 2>&1 || echo "# failed $?" >>"$raw"
  echo "# load after $(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"
  chunk=$(sed -n 's/^\[rank 0\] .*msg="gocoll: transport per peer".* chunk=\([0-9.]*\)MiB.*/\1/p' "$raw" | head -1); chunk=$(awk -v c="${chunk:-0.5}" 'BEGIN { printf "%d", c * 1048576 }')
  pred=$("$G" topo --explain $SIZE --topology "${raw%.txt}.topo.json" --coll allreduce --chunk $chunk | awk -v a="$a" '$1 == a { sub(/ *\(chosen.*$/, ""); print $NF; exit }')
  echo "$a round $r predicted $pred; calls (ms):"
  sed -n "s/^\[rank 0\] .*op=[Aa]ll[Rr]educe algo=[^ ]* bytes=$SIZE took=\([^ ]*\).*/\1/p" "$raw" |
    awk '{ t = $1; v = t + 0; if (t ~ /ms$/) v *= 1; else if (t ~ /µs$/) v /= 1e3; else if (t ~ /s$/) v *= 1e3; printf "%.0f ", v } END { print "" }'
done
done
