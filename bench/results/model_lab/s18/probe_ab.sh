#!/usr/bin/env bash
# The probe alone, before (4f35ff4) against after (ec8dcf5), interleaved: N jobs each of an 8 B AllReduce (-n 5),
# each writing its figures (GOCOLL_TOPO_DUMP); prints per job the WAN figure and the probe's time (INIT line).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
LAB=${LAB:-model18p}; N=${N:-12}; OUT=${OUT:-bench/results/model_lab/s18/probe_ab}
PATHS=4 RATE=200 DELAY=2 MTU=9000 HOSTS=2 SLOTS=2
. bench/lab_common.sh
lab_setup probe_ab
GOCOLL=${NEW:?NEW=the after binary} lab_build
cp "${BASE:?BASE=the before binary}" "$BIN/gocoll-base"
mkdir -p "$OUT"
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site $HOSTS --paths $PATHS --rate $RATE --delay $DELAY --mtu $MTU >/dev/null
"$G" lab hostfile --name "$LAB" --slots $SLOTS >"$BIN/hosts"
echo "| job | side | load before | WAN MB/s | WAN latency | probe took |"
echo "|---|---|---|---|---|---|"
for i in $(seq "$N"); do
  for side in before after; do
    g=$G; [[ $side == before ]] && g=$BIN/gocoll-base
    raw=$OUT/$i.$side.txt
    load=$(cut -d' ' -f1 /proc/loadavg)
    echo "# load before $(cut -d' ' -f1-3 /proc/loadavg)" >"$raw"
    "$g" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 300s -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=INIT \
      -x GOCOLL_TOPO_DUMP="${raw%.txt}.topo.json" -- "$g" bench allreduce --sizes 8 -n 5 -w 1 -c 1 >>"$raw" 2>&1 || echo "# failed $?" >>"$raw"
    line=$(grep -h '^\[rank 0\].*link figures' "$raw" | head -1)
    wan=$(sed -n 's/.*wan="\([^ ]*\) one way, \([^ ]*\) B\/s.*/\2/p' <<<"$line")
    lat=$(sed -n 's/.*wan="\([^ ]*\) one way.*/\1/p' <<<"$line")
    took=$(sed -n 's/.* took=\([^ ]*\).*/\1/p' <<<"$line")
    echo "| $i | $side | $load | $(awk -v w="${wan:-0}" 'BEGIN { printf "%.1f", w / 1e6 }') | $lat | $took |"
  done
done
