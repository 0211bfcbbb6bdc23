#!/usr/bin/env bash
# prof.sh OUTDIR [GOCOLL]: perf record -g of the WAN p2p (8 s) and a 16 MiB hierarchical run.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
LAB=${LAB:-lab90p}
OUT=$1; mkdir -p "$OUT"
. bench/lab_common.sh
lab_setup prof.sh
lab_build
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
"$G" lab hostfile --name "$LAB" --slots 2 >"$BIN/hosts"
grep -E "^$LAB-(s1h1|s2h1) " "$BIN/hosts" | sed 's/slots=[0-9]*/slots=1/' >"$BIN/hosts.wan"
cp $G $OUT/gocoll.bin
if [[ ${P2P:-1} == 1 ]]; then
"$G" run --hostfile "$BIN/hosts.wan" --rsh 'ip netns exec {host}' --timeout 90s -x GOCOLL_TRANSPORT=metaroce -x GOCOLL_DEBUG=info ${XENV:+-x $XENV} -- \
  sh -c "exec perf record -F 2999 -g -o $OUT/p2p.\$\$.data $G bench p2p --time 8s" >"$OUT/p2p.out" 2>&1 || echo failed >>"$OUT/p2p.out"
fi
if [[ ${HIER:-1} == 1 ]]; then
"$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 600s ${XENV:+-x $XENV} -- \
  sh -c "exec perf record -F 999 -g -o $OUT/hier.\$\$.data $G bench allreduce --sizes 16777216 -n 6 -w 1" >"$OUT/hier.out" 2>&1 || echo failed >>"$OUT/hier.out"
fi
