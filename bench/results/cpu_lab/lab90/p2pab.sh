#!/usr/bin/env bash
# p2pab.sh OUT ROUNDS "label1:ENV1 ENV2|label2:...": WAN p2p (s1h1->s2h1, 8 s) under perf stat, interleaved.
# Prints per label and round: MiB, DATA datagrams, sender and receiver CPU-us per DATA datagram, ctx switches/dg.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
LAB=${LAB:-lab90a}
OUT=$1; ROUNDS=$2; IFS='|' read -r -a CASES <<<"$3"
mkdir -p "$OUT"
. bench/lab_common.sh
lab_setup p2pab.sh
declare -A BINS
for c in "${CASES[@]}"; do l=${c%%:*}; b=$(echo "${c#*:}" | tr ' ' '\n' | sed -n 's/^BIN=//p'); BINS[$l]=${b:-}; done
lab_build
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
"$G" lab hostfile --name "$LAB" --slots 2 >"$BIN/hosts"
grep -E "^$LAB-(s1h1|s2h1) " "$BIN/hosts" | sed 's/slots=[0-9]*/slots=1/' >"$BIN/hosts.wan"
for r in $(seq 1 $ROUNDS); do
 for c in "${CASES[@]}"; do
  l=${c%%:*}; envs=${c#*:}; xa=(); bin=$G
  for kv in $envs; do if [[ $kv == BIN=* ]]; then bin=${kv#BIN=}; else xa+=(-x "$kv"); fi; done
  raw=$OUT/$l.$r; rm -f $raw.perf.*
  "$G" run --hostfile "$BIN/hosts.wan" --rsh 'ip netns exec {host}' --timeout 90s -x GOCOLL_TRANSPORT=metaroce -x GOCOLL_DEBUG=info ${xa[@]+"${xa[@]}"} -- \
    sh -c "exec perf stat -x, -e task-clock,context-switches,syscalls:sys_enter_sendmmsg,syscalls:sys_enter_recvmmsg,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex -o $raw.perf.\$GOCOLL_RANK $bin bench p2p --time 8s" >"$raw.out" 2>&1 || echo "# failed" >>"$raw.out"
  mib=$(awk '/# total:/ { for (i = 1; i <= NF; i++) if ($i == "MiB") print $(i - 1) }' $raw.out | tail -1)
  pk=$(awk '/msg="gocoll: path" rank=0 / { for (i = 1; i <= NF; i++) if ($i ~ /^packets=/) p += substr($i, 9) } END { print p+0 }' $raw.out)
  awk -F, -v pk=$pk -v l=$l -v r=$r -v mib="$mib" 'FNR==1{f++} $1 ~ /^[0-9.]+$/ { v[f,$3]=$1 } END {
    printf "%-10s r%d MiB %s dg %d  us/dg snd %.1f rcv %.1f tot %.1f | cs/dg %.2f %.2f sendmmsg/dg %.2f %.2f recvmmsg/dg %.2f %.2f epoll/dg %.2f %.2f futex/dg %.2f %.2f\n", l, r, mib, pk,
     v[1,"task-clock"]*1000/pk, v[2,"task-clock"]*1000/pk, (v[1,"task-clock"]+v[2,"task-clock"])*1000/pk,
     v[1,"context-switches"]/pk, v[2,"context-switches"]/pk, v[1,"syscalls:sys_enter_sendmmsg"]/pk, v[2,"syscalls:sys_enter_sendmmsg"]/pk,
     v[1,"syscalls:sys_enter_recvmmsg"]/pk, v[2,"syscalls:sys_enter_recvmmsg"]/pk, v[1,"syscalls:sys_enter_epoll_pwait"]/pk, v[2,"syscalls:sys_enter_epoll_pwait"]/pk,
     v[1,"syscalls:sys_enter_futex"]/pk, v[2,"syscalls:sys_enter_futex"]/pk }' $raw.perf.0 $raw.perf.1 | tee -a $OUT/summary.txt
 done
done
