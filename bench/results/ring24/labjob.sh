#!/usr/bin/env bash
# labjob.sh BIN OUTDIR: one ring job (16M, -w 3 -n 10) in lab ring24b, with R24 logs,
# lab stats every second, and the WAN link of every (port>peerport) seen on 0-7 and 3-4.
set -u
BIN=$1 O=$2 LAB=${LAB:-ring24b}
mkdir -p $O
G=$BIN
$G lab down --name $LAB >/dev/null 2>&1 || true
$G lab up --name $LAB --hosts-per-site 2 --paths 4 --rate ${RATE:-200} --delay 2 --mtu 9000 >/dev/null || exit 1
$G lab hostfile --name $LAB --slots 2 > $O/hosts
( while :; do echo "T $(date -u +%s.%N)"; $G lab stats --name $LAB | awk '$1 ~ /^s1-s2/'; sleep 1; done ) > $O/stats.txt 2>&1 &
SP=$!
echo "load before $(cat /proc/loadavg)" > $O/out.txt
$G run --hostfile $O/hosts --rsh 'ip netns exec {host}' --timeout 300s -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=ALL -x GOCOLL_PROBE=0 -- \
  $G bench allreduce --sizes 16777216 -n 10 -w 3 --algo ring >> $O/out.txt 2>&1
echo "load after $(cat /proc/loadavg)" >> $O/out.txt
kill $SP
$G lab stats --name $LAB > $O/final.txt
# resolve routes: rank 0 (10.1.0.11) to 7 (10.2.0.12), rank 3 (10.1.0.12) to 4 (10.2.0.11)
grep -hE '^\[rank (0\].*peer=7|3\].*peer=4) .*' $O/out.txt | grep 'R24 scores' | sed -n 's/^\[rank \([03]\)\].*ports=\([0-9>,]*\).*/\1 \2/p' | sort -u | while read r ports; do
  for pp in ${ports//,/ }; do echo "$r $pp"; done; done | sort -u | while read r pp; do
  sp=${pp%>*} dp=${pp#*>}
  if [ $r = 0 ]; then src=10.1.0.11 dst=10.2.0.12; else src=10.1.0.12 dst=10.2.0.11; fi
  l=$(ip -n $LAB-s1r route get $dst from $src iif lan ipproto udp sport $sp dport $dp | grep -o 'dev s2p[0-9]' | tail -c2)
  echo "$r $sp $dp $l"
done > $O/routes.txt
$G lab down --name $LAB >/dev/null
grep -o 'ring.*' /dev/null
awk '$1=="[rank" && $2=="0]" && $3=="16777216"' $O/out.txt | tail -1
