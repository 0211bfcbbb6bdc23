#!/usr/bin/env bash
# spin_ab.sh: model28's test of the busy CPU a byte's mechanism. The same
# job (AllReduce SIZE, ALGO forced) with the transports' spinning waits on
# (default) and off (GOCOLL_SPIN_WAIT=0: a wait sleeps at once), interleaved
# ROUNDS times; each run's probe writes its figures (GOCOLL_TOPO_DUMP). If
# the probe's busy figure's excess over the lone one is the waiters'
# spinning, it shrinks with spinning off. Run from the repository's root as
# root: LAB=model28b GOCOLL=BIN OUT=DIR SIZE=4M ALGO=ring ROUNDS=3 bash THIS
set -euo pipefail
LAB=${LAB:-model28b} SIZE=${SIZE:-4M} ALGO=${ALGO:-ring} ROUNDS=${ROUNDS:-3}
OUT=${OUT:?}
PATHS=4 RATE=200 DELAY=2 MTU=9000 HOSTS=2 SLOTS=2
. bench/lab_common.sh
lab_setup spin_ab.sh
lab_build
mkdir -p "$OUT"
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site $HOSTS --paths $PATHS --rate $RATE --delay $DELAY --mtu $MTU >/dev/null
"$G" lab hostfile --name "$LAB" --slots $SLOTS >"$BIN/hosts"
b=$(bytes "$SIZE")
n="-n 5 -w 1 -c 0"; ((b > 16 << 20)) && n="-n 2 -w 1 -c 0"
for r in $(seq "$ROUNDS"); do
  for spin in default 0; do
    raw=$OUT/$ALGO.$SIZE.spin$spin.$r.txt
    env=(); [[ $spin == 0 ]] && env=(-x GOCOLL_SPIN_WAIT=0)
    echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$raw"
    /usr/bin/time -f '# cpu %U %S %e' -o "$BIN/time" "$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 600s \
      "${env[@]}" -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL,INIT -x GOCOLL_TOPO_DUMP="${raw%.txt}.topo.json" -- \
      "$G" bench allreduce --sizes "$b" $n --algo "$ALGO" >>"$raw" 2>&1 || echo "# run failed: $?" >>"$raw"
    cat "$BIN/time" >>"$raw"
    echo "$r spin=$spin: $(awk -v s="$b" '$1 == "[rank" && $2 == "0]" && $3 == s { print $8 }' "$raw" | tail -1) us, $(tail -1 "$raw")" >&2
  done
done
