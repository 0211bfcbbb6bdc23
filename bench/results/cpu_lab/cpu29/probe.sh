#!/usr/bin/env bash
# probe.sh: one lab run of BIN (-n ITERS) with perf record of EVENTS -g on every rank.
# The probes (cpu29), on a copy of the binary:
#   perf probe -x BIN -a usleep=runtime.usleep -a tsleep=runtime.notetsleep \
#     -a wakesysmon=runtime.entersyscallWakeSysmon -a notewakeup=runtime.notewakeup
#   perf probe -x BIN -a 'readslots=github.com/gocoll/gocoll/transport/metaroce/mrtransport.(*engine).readSlots' \
#     (and handlebatch=...(*engine).handleBatch, ewrite=...(*engine).write, pwait=.../udpio.(*Poller).Wait,
#     wsend=.../udpio.(*writer).send)
# then: for f in OUT/n*/perf.*; do perf script -i $f -F event,ip,sym; done > OUT/nN/all.txt; probecount.py OUT 12
set -euo pipefail
LAB=${LAB:-cpu29pr}; OUT=${OUT:-/tmp/cpu29/pr}; ITERS=${ITERS:-8}; BIN=${BIN:-/tmp/cpu29/gocoll.probe}
EVENTS=${EVENTS:-probe_gocoll:*}
mkdir -p "$OUT"
"$BIN" lab down --name "$LAB" >/dev/null 2>&1 || true
trap '"$BIN" lab down --name "$LAB" >/dev/null 2>&1 || true' EXIT
"$BIN" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
"$BIN" lab hostfile --name "$LAB" --slots 2 >"$OUT/hosts"
for it in 2 $ITERS; do
  d=$OUT/n$it; rm -rf $d; mkdir -p $d
  echo "load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)" >"$d/load"
  "$BIN" run --hostfile "$OUT/hosts" --rsh 'ip netns exec {host}' --timeout 900s -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL,NET -- \
    sh -c "exec perf record -q -e '$EVENTS' -g -o $d/perf.\$\$ $BIN bench allreduce --sizes 16777216 -n $it -w 1 --algo auto" >"$d/out" 2>&1 || echo "# run failed: $?" >>"$d/out"
  echo "load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)" >>"$d/load"
done
