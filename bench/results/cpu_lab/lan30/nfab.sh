#!/usr/bin/env bash
# nfab.sh: main's 16 MiB hierarchical job in one lab, the routers' bridge-nf-call-iptables 1 (A) against 0 (B), ABBA.
set -euo pipefail
LAB=${LAB:-lan30n}; OUT=${OUT:-/tmp/lan30/nf}; ITERS=${ITERS:-8}; G=${G:-/tmp/lan30/gocoll.A}
mkdir -p "$OUT"
trap '"$G" lab down --name "$LAB" >/dev/null 2>&1 || true' EXIT
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
H=$(mktemp); "$G" lab hostfile --name "$LAB" --slots 2 >"$H"
routers=$(ip netns list | awk '{print $1}' | grep "^$LAB" | grep -E 's[0-9]+r$' || true)
echo "routers: $routers" >"$OUT/routers"
for r in ${ROUNDS:-1 2}; do
  if (( r % 2 )); then order="A B"; else order="B A"; fi
  for x in $order; do
    v=1; [ $x = B ] && v=0
    for ns in $routers; do ip netns exec $ns sh -c "echo $v > /proc/sys/net/bridge/bridge-nf-call-iptables"; done
    d=$OUT/$x.r$r; rm -rf $d; mkdir -p $d
    echo "load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)" >"$d/load"
    "$G" run --hostfile "$H" --rsh 'ip netns exec {host}' --timeout 900s \
      -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL,NET -- \
      sh -c "exec /usr/bin/time -f '%U %S' -o $d/cpu.\$\$ $G bench allreduce --sizes 16777216 -n $ITERS -w 1 --algo auto" >"$d/out" 2>&1 || echo "# run failed: $?" >>"$d/out"
    echo "load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)" >>"$d/load"
  done
done
