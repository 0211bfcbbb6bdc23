#!/usr/bin/env bash
# floorab.sh: udpfloor s1h1 -> s2h1 in lab LAB at GOMAXPROCS 1, receiver default vs -batchwait W, interleaved
set -euo pipefail
LAB=${LAB:-wake24a}; ROUNDS=${ROUNDS:-2}; RATE=${RATE:-52e6}; WAITS=${WAITS:-0 1ms}; OUT=${OUT:-/tmp/wake24/floor}
F=/tmp/wake24/udpfloor; H=/tmp/wake24/ab/hosts; mkdir -p $OUT
src=$(awk -v h="$LAB-s1h1" '$1 == h { for (i = 2; i <= NF; i++) if ($i ~ /^addr=/) print substr($i, 6) }' $H)
dst=$(awk -v h="$LAB-s2h1" '$1 == h { for (i = 2; i <= NF; i++) if ($i ~ /^addr=/) print substr($i, 6) }' $H)
sp=""
for ((i = 0; i < 4; i++)); do
  for ((p = 40000 + i * 1000; p < 41000 + i * 1000; p++)); do
    if ip netns exec "$LAB-s1r" ip route get "$dst" from "$src" iif lan ipproto udp sport $p dport $((7000 + i)) 2>/dev/null | grep -q "dev s2p$((i + 1)) "; then sp+=${sp:+,}$p; break; fi
  done
done
for ((r = 1; r <= ROUNDS; r++)); do for w in $WAITS; do
  l0=$(cut -d' ' -f1 /proc/loadavg)
  bw=""; [[ $w != 0 ]] && bw="-batchwait $w"
  ip netns exec "$LAB-s2h1" env GOMAXPROCS=1 $F -recv -listen "$dst:7000" -paths 4 -time 8s $bw >$OUT/recv.$w.$r 2>&1 &
  sleep 0.5
  ip netns exec "$LAB-s1h1" env GOMAXPROCS=1 $F -send -to "$dst:7000" -paths 4 -rate $RATE -time 8s -sports $sp ${TICK:+-tick $TICK} >$OUT/send.$w.$r 2>&1 || true
  wait
  echo "round $r wait $w load $l0-$(cut -d' ' -f1 /proc/loadavg): $(cat $OUT/send.$w.$r | cut -d' ' -f3,8) | $(tr '\n' ' ' < $OUT/recv.$w.$r | cut -d' ' -f3,8-10,14-)"
done; done
