#!/usr/bin/env bash
# Throwaway: needs /tmp/cpu26/gocoll.nap, a build with the nap described in ../cpu26.md (not in the tree).
# nap.sh: WAN p2p (s1h1 -> s2h1) as a job rank, throwaway nap build, NAP values interleaved.
set -u
B=$(mktemp -d); chmod 755 $B; cp /tmp/cpu26/gocoll.nap $B/gocoll; G=$B/gocoll
trap '$G lab down --name cpu26n >/dev/null 2>&1; rm -rf $B' EXIT
$G lab up --name cpu26n --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
$G lab hostfile --name cpu26n --slots 2 > $B/hosts
grep -E "^cpu26n-(s1h1|s2h1) " $B/hosts | sed 's/slots=[0-9]*/slots=1/' > $B/hosts.wan
for r in ${ROUNDS:-1 2}; do for nap in ${NAPS:-0 500 1000}; do
  d=/tmp/cpu26/nap/$r.$nap; rm -rf $d; mkdir -p $d
  l=$(cut -d' ' -f1 /proc/loadavg)
  timeout 120 $G run --hostfile $B/hosts.wan --rsh 'ip netns exec {host}' --timeout 90s -x GOCOLL_TRANSPORT=metaroce -x GOCOLL_DEBUG=info -x GOMAXPROCS=1 -x GOCOLL_TMP_NAP_US=$nap -- \
    sh -c "exec perf stat -x, -e task-clock,context-switches -o $d/stat.\$\$ $G bench p2p --time 8s" > $d/out 2>&1
  cpu=$(cat $d/stat.* | awk -F, '$3=="task-clock"{s+=$1} END{print s/1000}')
  cs=$(cat $d/stat.* | awk -F, '$3=="context-switches"{s+=$1} END{print s}')
  data=$(grep -o 'rank=0 datagramsWritten=[0-9]* writeBatches=[0-9]* datagramsRead=[0-9]* readBatches=[0-9]* .* data=[0-9]*' $d/out | grep -o 'data=[0-9]*' | head -1 | cut -d= -f2)
  rb=$(grep -o 'rank=1 datagramsWritten=[0-9]* writeBatches=[0-9]* datagramsRead=[0-9]* readBatches=[0-9]*' $d/out | grep -o 'readBatches=[0-9]*' | cut -d= -f2)
  gp=$(grep -o 'goodput [0-9.]* Mbit/s' $d/out | head -1)
  echo "round $r nap $nap load $l: $gp; CPU-us/DATA $(awk -v c=$cpu -v n=$data 'BEGIN{printf "%.2f", c*1e6/n}') (cpu ${cpu}s, $data DATA), ctxsw/DATA $(awk -v c=$cs -v n=$data 'BEGIN{printf "%.2f", c/n}'), receiver DATA/read $(awk -v a=$data -v b=$rb 'BEGIN{printf "%.2f", a/b}')"
done; done
