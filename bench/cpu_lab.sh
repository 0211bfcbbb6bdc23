#!/usr/bin/env bash
# bench/cpu_lab.sh: where the CPU of issue 14's two-site lab job goes, and
# the bound the machine's cores put on its busbw. Needs root (network
# namespaces), iproute2 and iptables; perf (linux-perf) for the counts.
#
# Usage: bench/cpu_lab.sh
#   env: LAB (lab name, default cpu), OUT (default bench/results/cpu_lab),
#        SIZES (default "4M 16M"), ALGOS (default "auto ring"), ITERS (timed
#        iterations of the long run, default 10), SPIN (GOCOLL_SPIN_WAIT
#        values to run each case with, default "default 0"; "default" leaves
#        it unset), GOCOLL (a gocoll binary to run instead of building this
#        tree's, for A/B), REV (the code's commit for the table), XENV
#        (NAME=VALUE settings, space-separated, given to every job with
#        gocoll run -x, e.g. XENV=GOCOLL_ARRIVAL_TIMES=1 for an A/B of a
#        switch with one binary; GOMAXPROCS=N is taken too, for the Go
#        scheduler's share: 8 ranks of 2 Ps each share the 2 cores)
#
# The lab is hier_lab.sh's: 2 sites x 2 hosts x 2 ranks, 4 WAN paths of
# 200 Mbit/s each way, 2 ms one way, MTU 9000, default transport (shm in a
# host, MetaRoCE between hosts). For each size, algorithm and spin setting
# it runs `gocoll bench allreduce` twice, with -n 2 and -n ITERS, each rank
# under `perf stat` (or /usr/bin/time without perf), and reads the delay
# daemons' CPU from /proc before and after. The difference between the two
# runs over the difference in AllReduce calls (rank 0's COLL lines) is the
# cost of one more call, the set-up left out: the job's CPU-seconds (all 8
# ranks), context switches, page faults and system calls by kind, and the
# delay daemons' CPU-seconds (the lab's emulation of the WAN's delay, which
# real sites do not spend on their hosts).
#
# Then one MetaRoCE connection's cost per MB moved (`gocoll bench p2p`, 8 s,
# 2 processes): across the WAN (s1h1 -> s2h1, with the delay daemon's) and
# within a site (s1h1 -> s1h2), with both ranks' sendmmsg, recvmmsg and
# context switches per DATA datagram (under perf stat, whose tracepoints add
# to the CPU figure a little).
# The p2p ranks are alone on their hosts, so the launcher leaves them all
# the cores (GOMAXPROCS 2 here), where each of the job's ranks, one of
# SLOTS on its host, gets its share (1): with 2 Ps the Go scheduler wakes a
# second thread for much of what one P does in turn (a timer reset, a
# reader woken beside another, a spinning waiter's Gosched; session 23,
# cpu23: context switches per DATA datagram 1.26 against 0.49 at the
# receiver, load 1-4), so the WAN connection is run again at the job ranks'
# GOMAXPROCS ('as a job rank'), and so is the floor.
#
# Then the floor (bench/udpfloor): a bare UDP sender and receiver across the
# WAN at the WAN connection's goodput, 8972-byte datagrams over 4 sockets
# whose source ports the lab's ECMP hash puts on the 4 WAN paths (asked of
# the router with ip route get), a sendmmsg per datagram, no ACKs: what
# the processes, the kernel and the delay daemons spend per datagram
# without any protocol.
#
# The machine's bound: a call cannot take less than its CPU over the cores,
# so busbw <= S x 2(n-1)/n / (CPU per call / cores). Where that is below 90 %
# of the hierarchical WAN bound (0.175 GB/s, see hier_lab.sh), the target
# cannot be met on this machine whatever the transport does with its wire.
set -euo pipefail
cd "$(dirname "$0")/.."

LAB=${LAB:-cpu}
OUT=${OUT:-bench/results/cpu_lab}
SIZES=${SIZES:-4M 16M}
ALGOS=${ALGOS:-auto ring}
ITERS=${ITERS:-10}
SPIN=${SPIN:-default 0}
REV=${REV:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}
XENV=${XENV:-}
XARGS=()
for kv in $XENV; do
  [[ $kv == GOCOLL_*=* || $kv == GOMAXPROCS=* ]] || { echo "bench/cpu_lab.sh: XENV entry $kv: want GOCOLL_NAME=VALUE or GOMAXPROCS=N" >&2; exit 2; }
  XARGS+=(-x "$kv")
done

. bench/lab_common.sh
lab_setup cpu_lab.sh
lab_build
go build -o "$BIN/udpfloor" ./bench/udpfloor
mkdir -p "$OUT/raw"
PERF=0
perf stat -e task-clock true >/dev/null 2>&1 && PERF=1
EV=task-clock,context-switches,page-faults
for s in sendmmsg recvmmsg epoll_pwait sched_yield futex nanosleep process_vm_readv; do
  EV+=,syscalls:sys_enter_$s
done

PATHS=4 RATE=200 DELAY=2 MTU=9000 HOSTS=2 SLOTS=2 N=8 CORES=$(nproc)
R=$(awk -v p=$PATHS -v r=$RATE 'BEGIN { print p * r * 1e6 / 8 }') # WAN bytes/s one way
HIER_BOUND=$(awk -v r="$R" -v n=$N 'BEGIN { printf "%.3f", r / 1e9 * 2 * (n - 1) / n }')
stamp=$(date -u +%Y%m%d-%H%M%S)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site $HOSTS --paths $PATHS --rate $RATE --delay $DELAY --mtu $MTU >/dev/null
"$G" lab hostfile --name "$LAB" --slots $SLOTS >"$BIN/hosts"
grep -E "^$LAB-(s1h1|s2h1) " "$BIN/hosts" | sed 's/slots=[0-9]*/slots=1/' >"$BIN/hosts.wan"
grep -E "^$LAB-(s1h1|s1h2) " "$BIN/hosts" | sed 's/slots=[0-9]*/slots=1/' >"$BIN/hosts.lan"
DPIDS=$(delayd_pids)
# delayd_ticks: the delay daemons' CPU so far, in clock ticks.
HZ=$(getconf CLK_TCK)


# run DIR ITERS SIZE ALGO SPIN: one job; DIR gets out, one counts file per
# rank (perf stat -x, or /usr/bin/time) and delayd (the daemons' ticks).
run() {
  local d=$1 it=$2 b=$3 a=$4 sp=$5 t0 wrap
  mkdir -p "$d"
  if [[ $PERF == 1 ]]; then wrap="perf stat -x, -e $EV -o $d/rank.\$\$"; else wrap="/usr/bin/time -f '%U %S' -o $d/rank.\$\$"; fi
  t0=$(delayd_ticks)
  "$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 900s \
    -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL,NET ${sp:+-x GOCOLL_SPIN_WAIT=$sp} ${XARGS[@]+"${XARGS[@]}"} -- \
    sh -c "exec $wrap $G bench allreduce --sizes $b -n $it -w 1 --algo $a" >"$d/out" 2>&1 || echo "# run failed: $?" >>"$d/out"
  echo $(($(delayd_ticks) - t0)) >"$d/delayd"
}
# totals DIR: "event value" lines summed over the ranks, with "calls" (rank
# 0's AllReduces) and "delayd" (CPU-seconds).
totals() {
  local d=$1 b=$2
  if [[ $PERF == 1 ]]; then
    cat "$d"/rank.* | awk -F, '$1 ~ /^[0-9.]+$/ && $3 != "" { s[$3] += $1 } END { for (e in s) print e, s[e] }'
  else
    cat "$d"/rank.* | awk '$1 ~ /^[0-9.]+$/ { s += ($1 + $2) * 1000 } END { print "task-clock", s }'
  fi
  echo "calls $(grep -c "^\[rank 0\] .*op=[Aa]ll[Rr]educe .* bytes=$b " "$d/out" || true)"
  # The MetaRoCE engines' counters at close, summed over the ranks.
  awk '/msg="mrtransport: engine"/ { for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2 && kv[1] ~ /^(datagramsWritten|writeBatches|readBatches|timerRuns)$/) s[kv[1]] += kv[2] }
    END { for (k in s) print "engine:" k, s[k] }' "$d/out"
  awk -v hz="$HZ" '{ print "delayd", $1 / hz }' "$d/delayd"
}

declare -A ROW
for s in $SIZES; do
  b=$(bytes "$s")
  for a in $ALGOS; do
    for sp in $SPIN; do
      [[ $sp == default ]] && sp=
      base=$OUT/raw/$stamp.$s.$a.spin${sp:-default}
      run "$base.short" 2 "$b" "$a" "$sp"
      run "$base.long" "$ITERS" "$b" "$a" "$sp"
      totals "$base.short" "$b" >"$base.short.tot"
      totals "$base.long" "$b" >"$base.long.tot"
      # Per call: (long - short) / (calls long - calls short).
      awk 'FNR == 1 { f++ } { v[f, $1] = $2; k[$1] = 1 } END {
          c = v[2, "calls"] - v[1, "calls"]; if (c <= 0) { print "failed"; exit }
          for (e in k) if (e != "calls") printf "%s %.6g\n", e, (v[2, e] - v[1, e]) / c }' \
        "$base.short.tot" "$base.long.tot" | sort >"$base.percall"
      bw=$(awk -v s="$b" -v n=$N '$1 == "[rank" && $2 == "0]" && $3 == s && $8 > 0 { printf "%.3f", s / ($8 * 1e-6) / 1e9 * 2 * (n - 1) / n }' "$base.long/out" | tail -1)
      ROW[$s.$a.${sp:-default}]=$(awk -v s="$b" -v n=$N -v cores="$CORES" -v bound="$HIER_BOUND" -v bw="${bw:-?}" -v size="$s" -v a="$a" -v sp="${sp:-default}" '
        { v[$1] = $2 }
        function g(e) { return (e in v) ? v[e] : 0 }
        END {
          cpu = g("task-clock") / 1000; d = g("delayd")
          cap = (cpu + d > 0) ? s * 2 * (n - 1) / n / ((cpu + d) / cores) / 1e9 : 0
          capr = (cpu > 0) ? s * 2 * (n - 1) / n / (cpu / cores) / 1e9 : 0
          dg = g("engine:datagramsWritten"); wb = g("engine:writeBatches"); rb = g("engine:readBatches")
          printf "| %s | %s | %s | %s | %.3f | %.3f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f (%.2f, %.2f) | %.0f | %.3f (%.0f %%) | %.3f (%.0f %%) |",
            size, a, sp, bw, cpu, d, g("context-switches"), g("syscalls:sys_enter_sendmmsg"), g("syscalls:sys_enter_recvmmsg"),
            g("syscalls:sys_enter_epoll_pwait"), g("syscalls:sys_enter_sched_yield"), g("syscalls:sys_enter_futex"), g("page-faults"),
            dg, (wb > 0) ? dg / wb : 0, (rb > 0) ? dg / rb : 0, g("engine:timerRuns"),
            cap, 100 * cap / bound, capr, 100 * capr / bound
        }' "$base.percall")
      echo "bench/cpu_lab.sh: ${ROW[$s.$a.${sp:-default}]}" >&2
    done
  done
done

# p2p HOSTFILE NAME [NAME=VALUE...]: one MetaRoCE connection for 8 s, the
# settings given to both ranks (gocoll run -x); "MiB ranks-CPU delayd-CPU
# DATA-datagrams sendmmsg recvmmsg context-switches", the last three summed
# over both ranks (0 without perf) and the datagrams those of the sender's
# paths (GOCOLL_DEBUG=info's close figures, resends included).
p2p() {
  local raw=$OUT/raw/$stamp.p2p.$2.txt t0 wrap kv px=()
  for kv in "${@:3}"; do px+=(-x "$kv"); done
  t0=$(delayd_ticks)
  wrap="/usr/bin/time -f '# rankcpu %U %S'"
  [[ $PERF == 1 ]] && wrap="perf stat -x, -e task-clock,context-switches,syscalls:sys_enter_sendmmsg,syscalls:sys_enter_recvmmsg -o $raw.perf.\$\$"
  rm -f "$raw".perf.*
  "$G" run --hostfile "$1" --rsh 'ip netns exec {host}' --timeout 90s -x GOCOLL_TRANSPORT=metaroce -x GOCOLL_DEBUG=info ${XARGS[@]+"${XARGS[@]}"} ${px[@]+"${px[@]}"} -- \
    sh -c "exec $wrap $G bench p2p --time 8s" >"$raw" 2>&1 || echo "# run failed: $?" >>"$raw"
  if [[ $PERF == 1 ]]; then cat "$raw".perf.* | awk -F, '$1 ~ /^[0-9.]+$/ && $3 == "task-clock" { printf "# rankcpu %s 0\n", $1 / 1000 }
    $1 ~ /^[0-9.]+$/ && $3 ~ /^(context-switches|syscalls)/ { printf "# perf %s %s\n", $3, $1 }' >>"$raw"; fi
  awk -v d=$(($(delayd_ticks) - t0)) -v hz="$HZ" '
    /# total:/ { for (i = 1; i <= NF; i++) if ($i == "MiB") m = $(i - 1) }
    { for (i = 1; i <= NF; i++) if ($i == "rankcpu") c += $(i + 1) + $(i + 2) }
    /msg="gocoll: path" rank=0 / { for (i = 1; i <= NF; i++) if ($i ~ /^packets=/) p += substr($i, 9) }
    $1 == "#" && $2 == "perf" { v[$3] += $4 }
    END { printf "%s %s %s %d %d %d %d", m, c, d / hz, p, v["syscalls:sys_enter_sendmmsg"], v["syscalls:sys_enter_recvmmsg"], v["context-switches"] }' "$raw"
}
read -r wan_mib wan_cpu wan_d wan_pk wan_snd wan_rcv wan_cs <<<"$(p2p "$BIN/hosts.wan" wan)"
read -r lan_mib lan_cpu lan_d lan_pk lan_snd lan_rcv lan_cs <<<"$(p2p "$BIN/hosts.lan" lan)"
# JOBPROCS: the GOMAXPROCS each of the job's ranks runs with (launcher's
# fitGoMaxProcs: the cores over the ranks of its host).
JOBPROCS=$((CORES / SLOTS > 0 ? CORES / SLOTS : 1))
read -r wj_mib wj_cpu wj_d wj_pk wj_snd wj_rcv wj_cs <<<"$(p2p "$BIN/hosts.wan" wanjob GOMAXPROCS=$JOBPROCS)"
# floor: udpfloor from s1h1 to s2h1 at the WAN connection's goodput; "sent
# received sender-CPU receiver-CPU delayd-CPU" (CPU in seconds).
floor() { # floor [GOMAXPROCS [MIB]]: MIB, the goodput to match (default the WAN p2p's)
  local src dst rate sp="" i p t0 raw=$OUT/raw/$stamp.floor${1:+.procs$1}.txt gm=${1:+GOMAXPROCS=$1}
  src=$(awk -v h="$LAB-s1h1" '$1 == h { for (i = 2; i <= NF; i++) if ($i ~ /^addr=/) print substr($i, 6) }' "$BIN/hosts")
  dst=$(awk -v h="$LAB-s2h1" '$1 == h { for (i = 2; i <= NF; i++) if ($i ~ /^addr=/) print substr($i, 6) }' "$BIN/hosts")
  rate=$(awk -v m="${2:-$wan_mib}" 'BEGIN { r = m * 1048576 / 8; if (r < 1e6) r = 90e6; printf "%.0f", r }')
  for ((i = 0; i < PATHS; i++)); do
    for ((p = 40000 + i * 1000; p < 41000 + i * 1000; p++)); do
      if ip netns exec "$LAB-s1r" ip route get "$dst" from "$src" iif lan ipproto udp sport $p dport $((7000 + i)) 2>/dev/null | grep -q "dev s2p$((i + 1)) "; then
        sp+=${sp:+,}$p
        break
      fi
    done
  done
  t0=$(delayd_ticks)
  ip netns exec "$LAB-s2h1" env $gm "$BIN/udpfloor" -recv -listen "$dst:7000" -paths $PATHS -time 8s >"$raw.recv" 2>&1 &
  sleep 0.5
  ip netns exec "$LAB-s1h1" env $gm "$BIN/udpfloor" -send -to "$dst:7000" -paths $PATHS -rate "$rate" -time 8s ${sp:+-sports $sp} >"$raw" 2>&1 || true
  wait
  cat "$raw.recv" >>"$raw" && rm -f "$raw.recv"
  awk -v d=$(($(delayd_ticks) - t0)) -v hz="$HZ" '
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[$2, kv[1]] = kv[2] } }
    END { printf "%d %d %s %s %s", v["send", "datagrams"], v["recv", "datagrams"], v["send", "user"] + v["send", "sys"], v["recv", "user"] + v["recv", "sys"], d / hz }' "$raw"
}
read -r fl_sent fl_recv fl_scpu fl_rcpu fl_d <<<"$(floor)"
read -r fj_sent fj_recv fj_scpu fj_rcpu fj_d <<<"$(floor "$JOBPROCS" "$wj_mib")"
"$G" lab down --name "$LAB" >/dev/null
load1=$(cut -d' ' -f1-3 /proc/loadavg)
permb() { awk -v c="$1" -v m="$2" 'BEGIN { if (m > 0) printf "%.2f", c * 1000 / (m * 1.048576); else print "?" }'; }
# perdg N DATAGRAMS: N per DATA datagram.
perdg() { awk -v n="$1" -v p="$2" 'BEGIN { if (p > 0) printf "%.2f", n / p; else print "?" }'; }

table=$OUT/table.md
{
  echo "# Where the two-site lab job's CPU goes"
  echo
  echo "Run $stamp (UTC) of bench/cpu_lab.sh at commit $REV${XENV:+ with $XENV}, $CORES cores, load average $load0 before, $load1 after. Lab: 2 sites x $HOSTS hosts x $SLOTS ranks, $PATHS WAN paths x $RATE Mbit/s, $DELAY ms one way, MTU $MTU, default transport. Per AllReduce call, set-up left out ((run of -n $ITERS minus run of -n 2) over the difference in calls): the job's CPU-seconds (8 ranks), the delay daemons' CPU-seconds, and the ranks' context switches, system calls and page faults (perf stat$([[ $PERF == 1 ]] || echo ': not available, CPU only')); from the MetaRoCE engines' counters at close (\`mrtransport: engine\` lines), the datagrams written, with the datagrams per write (a sendmmsg, GSO trains counting as their datagrams) and per read batch (a recvmmsg, or a waiter's read), and the engine timer's runs. 'spin': GOCOLL_SPIN_WAIT. 'busbw': the long run's, out of place (GB/s). 'CPU cap': the busbw the cores allow at that CPU per call, S x 2(n-1)/n / (CPU / $CORES cores), with the delay daemons' CPU and without it (real sites do not emulate their WAN on their hosts), with its share of the hierarchical WAN bound $HIER_BOUND GB/s; the target is 90 %. Raw: raw/$stamp.*."
  echo
  echo "| size | algo | spin | busbw | job CPU-s | delayd CPU-s | ctx switches | sendmmsg | recvmmsg | epoll_pwait | sched_yield | futex | page faults | MetaRoCE datagrams (per write, per read) | timer runs | CPU cap (of $HIER_BOUND) | cap without delayd |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for s in $SIZES; do for a in $ALGOS; do for sp in $SPIN; do echo "${ROW[$s.$a.$sp]}"; done; done; done
  echo
  echo "One MetaRoCE connection, \`gocoll bench p2p\` for 8 s (set-up included), CPU per MB moved:"
  echo "- across the WAN (s1h1 -> s2h1): $wan_mib MiB; ranks $(permb "$wan_cpu" "$wan_mib") CPU-ms/MB, delay daemons $(permb "$wan_d" "$wan_mib") CPU-ms/MB; per DATA datagram ($wan_pk), both ranks: sendmmsg $(perdg "$wan_snd" "$wan_pk"), recvmmsg $(perdg "$wan_rcv" "$wan_pk"), context switches $(perdg "$wan_cs" "$wan_pk")"
  echo "- within a site (s1h1 -> s1h2, no delay): $lan_mib MiB; ranks $(permb "$lan_cpu" "$lan_mib") CPU-ms/MB; per DATA datagram ($lan_pk), both ranks: sendmmsg $(perdg "$lan_snd" "$lan_pk"), recvmmsg $(perdg "$lan_rcv" "$lan_pk"), context switches $(perdg "$lan_cs" "$lan_pk")"
  # us per datagram: CPU-seconds over datagrams.
  usdg() { awk -v c="$1" -v p="$2" 'BEGIN { if (p > 0) printf "%.1f", c * 1e6 / p; else print "?" }'; }
  echo "- the floor (bench/udpfloor, s1h1 -> s2h1, bare UDP at the WAN connection's goodput, no ACKs): $fl_sent datagrams sent, $fl_recv received; per datagram sender $(usdg "$fl_scpu" "$fl_sent") CPU-us, receiver $(usdg "$fl_rcpu" "$fl_recv") CPU-us, delay daemons $(usdg "$fl_d" "$fl_recv") CPU-us; against the WAN connection's ranks $(usdg "$wan_cpu" "$wan_pk") and delay daemons $(usdg "$wan_d" "$wan_pk") CPU-us per DATA datagram (its ACKs included)"
  echo "- as a job rank (GOMAXPROCS=$JOBPROCS, both ranks and both udpfloor processes): WAN $wj_mib MiB; ranks $(permb "$wj_cpu" "$wj_mib") CPU-ms/MB; per DATA datagram ($wj_pk), both ranks: sendmmsg $(perdg "$wj_snd" "$wj_pk"), recvmmsg $(perdg "$wj_rcv" "$wj_pk"), context switches $(perdg "$wj_cs" "$wj_pk"); ranks $(usdg "$wj_cpu" "$wj_pk") CPU-us per DATA datagram against the floor's sender $(usdg "$fj_scpu" "$fj_sent") and receiver $(usdg "$fj_rcpu" "$fj_recv") CPU-us per datagram ($fj_sent sent, $fj_recv received)"
} >"$table"
cat "$table"
