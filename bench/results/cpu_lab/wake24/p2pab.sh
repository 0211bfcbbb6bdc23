#!/usr/bin/env bash
# p2pab.sh: interleaved WAN p2p runs (s1h1 -> s2h1) at GOMAXPROCS=1 for the
# binaries given (NAME=PATH ...), ROUNDS rounds, in lab LAB (cpu_lab.sh's
# lab shape). Per rank perf stat; output in OUT/NAME.R/.
set -euo pipefail
LAB=${LAB:-wake24a}; OUT=${OUT:-/tmp/wake24/ab}; ROUNDS=${ROUNDS:-3}; T=${T:-8s}; XENV=${XENV:-}
G0=/tmp/wake24/gocoll.base
mkdir -p "$OUT"
EV=task-clock,context-switches,cpu-migrations
for s in sendmmsg recvmmsg epoll_pwait sched_yield futex nanosleep; do EV+=,syscalls:sys_enter_$s; done
if ! ip netns list | grep -q "^$LAB-s1h1"; then
  "$G0" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
fi
"$G0" lab hostfile --name "$LAB" --slots 2 >"$OUT/hosts"
grep -E "^$LAB-(s1h1|s2h1) " "$OUT/hosts" | sed 's/slots=[0-9]*/slots=1/' >"$OUT/hosts.wan"
XA=(); for kv in $XENV; do XA+=(-x "$kv"); done
for ((r = 1; r <= ROUNDS; r++)); do
  for nb in "$@"; do
    n=${nb%%=*}; b=${nb#*=}; d=$OUT/$n.$r; rm -rf "$d"; mkdir -p "$d"
    l0=$(cut -d' ' -f1 /proc/loadavg)
    "$b" run --hostfile "$OUT/hosts.wan" --rsh 'ip netns exec {host}' --timeout 90s -x GOCOLL_TRANSPORT=metaroce -x GOCOLL_DEBUG=info -x GOMAXPROCS=1 ${XA[@]+"${XA[@]}"} -- \
      sh -c "exec perf stat -x, -e $EV -o $d/rank.\$GOCOLL_RANK $b bench p2p --time $T" >"$d/out" 2>&1 || echo "# failed $?" >>"$d/out"
    l1=$(cut -d' ' -f1 /proc/loadavg)
    echo "load $l0 $l1" >"$d/load"
    python3 /tmp/wake24/sum.py "$d"
  done
done
