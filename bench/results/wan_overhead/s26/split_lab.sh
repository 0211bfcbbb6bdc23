#!/bin/bash
# one p2p job each way between s1h1 and s2h1 (both directions loaded), old and new, lab counters around it
L=wire26s
cd /tmp/wire26
st() { /tmp/wire26/gocoll.old lab stats --name $L | awk '$1 ~ /^s1-s2/ { b[$2]+=$5; p[$2]+=$4; d[$2]+=$7; q[$2]+=$NF } END { printf "%d %d %d %d %d %d %d %d\n", b["fwd"], p["fwd"], q["fwd"], d["fwd"], b["rev"], p["rev"], q["rev"], d["rev"] }'; }
for r in ${ROUNDS:-1 2}; do
for b in old new; do
  G=/tmp/wire26/gocoll.$b
  grep s1h1 hosts.s > h.up; grep s2h1 hosts.s >> h.up
  grep s2h1 hosts.s > h.down; grep s1h1 hosts.s >> h.down
  s0=$(st); l0=$(cut -d' ' -f1 /proc/loadavg)
  for d in up down; do
    nice -n -20 $G run --hostfile h.$d --rsh 'ip netns exec {host}' --timeout 60s -x GOCOLL_TRANSPORT=metaroce -x GOCOLL_PROBE=0 -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=NET -- $G bench p2p --time 8s > split.$b.$r.$d.txt 2>&1 &
  done
  wait
  s1=$(st)
  echo "$b round $r load $l0: before $s0 after $s1" | tee -a split_lab.log
done
done
