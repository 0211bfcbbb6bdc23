#!/bin/bash
# As run in session 23 (cpu23): lab cpu23a, hostfile /tmp/cpu23/hosts.wan (s1h1, s2h1; one slot each); paths hard-coded.
# p2p.sh BIN [NAME=VAL...]: one WAN p2p run, prints per-DATA figures
G=$1; shift
X=(); for kv in "$@"; do X+=(-x "$kv"); done
D=$(mktemp -d /tmp/cpu23/run.XXXX)
EV=task-clock,context-switches,syscalls:sys_enter_sendmmsg,syscalls:sys_enter_recvmmsg,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex
$G run --hostfile /tmp/cpu23/hosts.wan --rsh 'ip netns exec {host}' --timeout 90s -x GOCOLL_TRANSPORT=metaroce -x GOCOLL_DEBUG=info "${X[@]}" -- sh -c "exec perf stat -x, -e $EV -o $D/perf.\$\$ $G bench p2p --time ${T:-8s}" > $D/out 2>&1
pk=$(awk '/msg="gocoll: path" rank=0 / { for (i = 1; i <= NF; i++) if ($i ~ /^packets=/) p += substr($i, 9) } END {print p}' $D/out)
mib=$(awk '/# total:/ { for (i = 1; i <= NF; i++) if ($i == "MiB") m = $(i - 1) } END {print m}' $D/out)
for f in $D/perf.*; do
  awk -F, -v pk=$pk -v f=$(basename $f) '$1 ~ /^[0-9.]+$/ { v[$3]=$1 } END { printf "%s cpu_us/dg %.1f cs %.2f sendmmsg %.2f recvmmsg %.2f epoll %.2f futex %.2f\n", f, v["task-clock"]*1000/pk, v["context-switches"]/pk, v["syscalls:sys_enter_sendmmsg"]/pk, v["syscalls:sys_enter_recvmmsg"]/pk, v["syscalls:sys_enter_epoll_pwait"]/pk, v["syscalls:sys_enter_futex"]/pk }' $f
done
cat $D/perf.* | awk -F, -v pk=$pk -v mib=$mib -v ld="$(cut -d' ' -f1 /proc/loadavg)" -v tag="$*" '$1 ~ /^[0-9.]+$/ { v[$3]+=$1 } END { printf "TOTAL %s mib %s dg %d cpu_us/dg %.1f cs/dg %.2f snd %.2f rcv %.2f epoll %.2f futex %.2f load %s\n", tag, mib, pk, v["task-clock"]*1000/pk, v["context-switches"]/pk, v["syscalls:sys_enter_sendmmsg"]/pk, v["syscalls:sys_enter_recvmmsg"]/pk, v["syscalls:sys_enter_epoll_pwait"]/pk, v["syscalls:sys_enter_futex"]/pk, ld }'
grep engine $D/out | sed 's/.*rank=/rank=/'
