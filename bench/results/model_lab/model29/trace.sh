#!/usr/bin/env bash
# model29 (needs branch h/model29-trace's M29_HIERTRACE; EXTRA: more bench flags, e.g. -N 3; ENVX: more -x VAR=V; TAG: a file name tag): the hierarchical AllReduce's sends and receives, timed on every
# rank (M29_HIERTRACE, a temporary instrumentation on branch h/model29-trace), in
# the model_lab grid. Usage: LAB=model29b OUT=DIR SIZES="8 4194304" trace.sh
set -euo pipefail
cd "$(dirname "$0")/../../../.."
LAB=${LAB:-model29b}
OUT=${OUT:-bench/results/model_lab/model29/trace}
SIZES=${SIZES:-8 4194304}
PATHS=4 RATE=200 DELAY=2 MTU=9000 HOSTS=2 SLOTS=2
. bench/lab_common.sh
lab_setup trace.sh
lab_build
mkdir -p "$OUT"
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site $HOSTS --paths $PATHS --rate $RATE --delay $DELAY --mtu $MTU >/dev/null
"$G" lab hostfile --name "$LAB" --slots $SLOTS >"$BIN/hosts"
stamp=$(date -u +%H%M%S)
for s in $SIZES; do
  if ((s <= 65536)); then it="-n 50 -w 5 -c 1"; else it="-n 5 -w 1 -c 1"; fi
  raw=$OUT/$stamp${TAG:-}.hier.$s.txt
  echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$raw"
  "$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 300s -x M29_HIERTRACE=1 ${ENVX:-} \
    -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL,INIT -x GOCOLL_TOPO_DUMP="${raw%.txt}.topo.json" -- \
    "$G" bench allreduce --sizes $s $it --algo hierarchical ${EXTRA:-} >>"$raw" 2>&1 || echo "job failed" >>"$raw"
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"
done
