#!/usr/bin/env bash
# ab.sh: interleaved A/B of the lab job's CPU per 16 MiB hierarchical AllReduce (cpu_lab.sh's method:
# perf stat on every rank, run of -n ITERS minus run of -n 2, over the difference in calls).
# VARIANTS: "name=binary[,NAME=VALUE...]" space-separated.
set -euo pipefail
cd /work/wt/job23
LAB=${LAB:-job23ab}; OUT=${OUT:-/tmp/job23/ab}; ITERS=${ITERS:-8}; ROUNDS=${ROUNDS:-3}; SIZE=${SIZE:-16777216}; ALGO=${ALGO:-auto}
mkdir -p "$OUT"
BIN=$(mktemp -d); chmod 755 $BIN
first=${VARIANTS%% *}; first=${first#*=}; first=${first%%,*}
cp "$first" $BIN/lab; L=$BIN/lab
trap '"$L" lab down --name "$LAB" >/dev/null 2>&1 || true; rm -rf $BIN' EXIT
"$L" lab down --name "$LAB" >/dev/null 2>&1 || true
"$L" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
"$L" lab hostfile --name "$LAB" --slots 2 >"$BIN/hosts"
DPIDS=$(pgrep -f "lab delayd --config /run/gocoll-lab/$LAB/" || true)
delayd_ticks() { local t=0 p; for p in $DPIDS; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done; echo $t; }
EV=task-clock,context-switches,page-faults
for s in sendmmsg recvmmsg epoll_pwait sched_yield futex nanosleep process_vm_readv; do EV+=,syscalls:sys_enter_$s; done
run() { # run DIR ITERS BINARY XARGS...
  local d=$1 it=$2 g=$3 t0; shift 3
  rm -rf "$d"; mkdir -p "$d"
  t0=$(delayd_ticks)
  "$L" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 900s \
    -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL "$@" -- \
    sh -c "exec perf stat -x, -e $EV -o $d/rank.\$\$ $g bench allreduce --sizes $SIZE -n $it -w 1 --algo $ALGO" >"$d/out" 2>&1 || echo "# run failed: $?" >>"$d/out"
  echo $(($(delayd_ticks) - t0)) >"$d/delayd"
}
tot() { # tot DIR
  cat "$1"/rank.* | awk -F, '$1 ~ /^[0-9.]+$/ && $3 != "" { s[$3] += $1 } END { for (e in s) print e, s[e] }'
  echo "calls $(grep -c "^\[rank 0\] .*op=AllReduce .* bytes=$SIZE " "$1/out" || true)"
  awk -v hz=$(getconf CLK_TCK) '{ print "delayd", $1 / hz }' "$1/delayd"
  awk -v s=$SIZE '$1 == "[rank" && $2 == "0]" && $3 == s { printf "busbw %.4f\n", s / ($8 * 1e-6) / 1e9 * 2 * 7 / 8 }' "$1/out" | tail -1
}
REV_VARIANTS=$(echo $VARIANTS | tr ' ' '\n' | tac | tr '\n' ' ')
for r in $(seq 1 $ROUNDS); do
  order=$VARIANTS; (( r % 2 == 0 )) && order=$REV_VARIANTS # A B, then B A
  for v in $order; do
    name=${v%%=*}; spec=${v#*=}; IFS=, read -ra parts <<<"$spec"; g=${parts[0]}; xa=()
    for kv in "${parts[@]:1}"; do xa+=(-x "$kv"); done
    cp "$g" $BIN/g.$name
    ld0=$(cut -d' ' -f1 /proc/loadavg)
    run "$OUT/$name.r$r.short" 2 $BIN/g.$name ${xa[@]+"${xa[@]}"}
    run "$OUT/$name.r$r.long" $ITERS $BIN/g.$name ${xa[@]+"${xa[@]}"}
    ld1=$(cut -d' ' -f1 /proc/loadavg)
    tot "$OUT/$name.r$r.short" >"$OUT/$name.r$r.short.tot"; tot "$OUT/$name.r$r.long" >"$OUT/$name.r$r.long.tot"
    awk -v name=$name -v r=$r -v ld="$ld0-$ld1" 'FNR == 1 { f++ } { v[f, $1] = $2; k[$1] = 1 } END {
      c = v[2, "calls"] - v[1, "calls"]; if (c <= 0) { print name, r, "failed"; exit }
      printf "%s r%d load %s: job CPU-s %.4f delayd %.4f ctxsw %.0f sched_yield %.0f futex %.0f epoll %.0f sendmmsg %.0f recvmmsg %.0f faults %.0f nanosleep %.0f busbw(long) %s\n", name, r, ld,
        (v[2,"task-clock"]-v[1,"task-clock"])/c/1000, (v[2,"delayd"]-v[1,"delayd"])/c,
        (v[2,"context-switches"]-v[1,"context-switches"])/c, (v[2,"syscalls:sys_enter_sched_yield"]-v[1,"syscalls:sys_enter_sched_yield"])/c,
        (v[2,"syscalls:sys_enter_futex"]-v[1,"syscalls:sys_enter_futex"])/c, (v[2,"syscalls:sys_enter_epoll_pwait"]-v[1,"syscalls:sys_enter_epoll_pwait"])/c,
        (v[2,"syscalls:sys_enter_sendmmsg"]-v[1,"syscalls:sys_enter_sendmmsg"])/c, (v[2,"syscalls:sys_enter_recvmmsg"]-v[1,"syscalls:sys_enter_recvmmsg"])/c,
        (v[2,"page-faults"]-v[1,"page-faults"])/c, (v[2,"syscalls:sys_enter_nanosleep"]-v[1,"syscalls:sys_enter_nanosleep"])/c, v[2,"busbw"] }' \
      "$OUT/$name.r$r.short.tot" "$OUT/$name.r$r.long.tot" | tee -a "$OUT/summary.txt"
  done
done
