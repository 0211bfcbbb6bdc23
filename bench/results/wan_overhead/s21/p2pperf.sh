#!/usr/bin/env bash
# p2pperf.sh BIN OUTDIR [perf-mode: record|stat] [seconds] : WAN p2p (s1h1 -> s2h1) under perf, lab LAB.
set -euo pipefail
B=$1; O=$2; MODE=${3:-record}; T=${4:-8}
LAB=${LAB:-wancpu21p}
mkdir -p $O
D=$(mktemp -d); chmod 755 $D; cp $B $D/gocoll; G=$D/gocoll
$G lab down --name $LAB >/dev/null 2>&1 || true
$G lab up --name $LAB --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
$G lab hostfile --name $LAB --slots 2 > $D/hosts
grep -E "^$LAB-(s1h1|s2h1) " $D/hosts | sed 's/slots=[0-9]*/slots=1/' > $D/hosts.wan
if [[ $MODE == record ]]; then
  wrap="perf record -F 2000 -g -o $O/perf.\$\$.data"
else
  wrap="perf stat -x, -e task-clock,context-switches,syscalls:sys_enter_sendmmsg,syscalls:sys_enter_recvmmsg,syscalls:sys_enter_futex,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_nanosleep,syscalls:sys_enter_recvmsg,syscalls:sys_enter_sendmsg,syscalls:sys_enter_write,syscalls:sys_enter_read -o $O/stat.\$\$"
fi
uptime > $O/load
$G run --hostfile $D/hosts.wan --rsh 'ip netns exec {host}' --timeout 90s -x GOCOLL_TRANSPORT=metaroce -x GOCOLL_DEBUG=info ${XENV:-} -- \
  sh -c "exec $wrap $G bench p2p --time ${T}s" > $O/out 2>&1 || echo "# run failed $?" >> $O/out
uptime >> $O/load
$G lab down --name $LAB >/dev/null
rm -rf $D
