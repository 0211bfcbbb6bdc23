#!/usr/bin/env bash
# bench/hier_floor.sh: the floor of issue 14's lab target, the least CPU and
# the best time with which this machine moves the hierarchical AllReduce's
# complete per-call traffic (bench/hierfloor: bare UDP, no protocol) in
# bench/hier_lab.sh's lab. Needs root (network namespaces), iproute2 and
# iptables.
#
# Usage: bench/hier_floor.sh
#   env: LAB (default bound30hf), OUT (default bench/results/hier_floor),
#        SIZES (default "16M 64M"), MODES (default "gso plain": GSO trains
#        of 7 read with GRO, or single 8972-byte datagrams; gso-lNwM: LAN
#        trains of N, WAN trains of M, read with GRO; gso-rx and plain-rx
#        the same read by one coalescing reader, hierfloor -rxwait RXWAIT,
#        default 1ms), ONLYS (the phase
#        kinds of each run, space-separated sets, default
#        "mem,lan,wan wan lan mem": the whole call, then each kind alone
#        for the CPU split), ROUNDS (default 3), CALLS (timed calls a run,
#        default 10), WARMUP (default 1), PIECES (pipeline pieces, default 8;
#        1: phase after phase, with each kind's CPU in the ranks' lines),
#        WANRATE (bytes/s of payload a rank pair paces its WAN shard at,
#        default 24.8e6: the bound's share, 25e6 B/s a path of wire bytes,
#        less the headers: 8956 payload bytes in 9014 on the wire), LANRATE
#        (default 0: unpaced), NICE (default 0), GOCOLL (a gocoll binary)
#
# The lab: 2 sites x 2 hosts x 2 ranks, 4 WAN paths x 200 Mbit/s each way,
# 2 ms one way, MTU 9000 (hier_lab.sh's). Rank r runs in host r/2's
# namespace; its WAN peer r^4 (the shard owner pair) gets its shard over 4
# sockets whose source ports the lab's ECMP hash puts on the 4 paths.
# Every run: all 8 ranks start their first call at the same instant; a
# call's time is the slowest rank's mean over CALLS calls, against the
# bound S / 100 MB/s (167.8 ms at 16 MiB, 671.1 ms at 64 MiB; 90 %: 186.4
# and 745.7 ms). CPU a call: the ranks' own (getrusage over the timed
# calls, summed), and over the whole run (the first call's wait and the
# warm-up included) divided by CALLS + WARMUP: the delay daemons' (/proc),
# ksoftirqd's, the machine's softirq time and its busy time (/proc/stat:
# every process on the machine, other helpers' too). The ranks' figure
# takes in the kernel's work done in their system calls: with veth, a
# send's forwarding through the lab's router (up to the delay daemon's
# queue) runs in the sender's context. Drops: the UDP
# receive-buffer errors of the 4 hosts (/proc/net/snmp) and the lab's
# shaper and delay drops (gocoll lab stats); a run with a drop, a lost
# phase or a bad datagram is not a floor.
set -euo pipefail
cd "$(dirname "$0")/.."

LAB=${LAB:-bound30hf}
OUT=${OUT:-bench/results/hier_floor}
SIZES=${SIZES:-16M 64M}
MODES=${MODES:-gso plain}
ONLYS=${ONLYS:-mem,lan,wan wan lan mem}
ROUNDS=${ROUNDS:-3}
CALLS=${CALLS:-10}
WARMUP=${WARMUP:-1}
PIECES=${PIECES:-8}
WANRATE=${WANRATE:-24.8e6}
LANRATE=${LANRATE:-0}
NICE=${NICE:-0}
RXWAIT=${RXWAIT:-1ms}
PATHS=4 PORT=7100
R=100000000 # the WAN's bytes/s one way: 4 x 200 Mbit/s
REV=$(git rev-parse --short HEAD 2>/dev/null || echo '?')

. bench/lab_common.sh
lab_setup hier_floor.sh
lab_build
go build -o "$BIN/hierfloor" ./bench/hierfloor
mkdir -p "$OUT/raw"
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site 2 --paths $PATHS --rate 200 --delay 2 --mtu 9000 >/dev/null
"$G" lab hostfile --name "$LAB" --slots 1 >"$BIN/hosts"
H=(s1h1 s1h2 s2h1 s2h2) # host i holds ranks 2i and 2i+1
addr() { grep -E "^$LAB-$1 " "$BIN/hosts" | sed -n 's/.* addr=\([0-9.]*\).*/\1/p'; }
HOSTS=$(for h in "${H[@]}"; do addr "$h"; done | paste -sd,)
DPIDS=$(delayd_pids)
KPIDS=$(pgrep '^ksoftirqd/' || true)
HZ=$(getconf CLK_TCK)

SP=()
for r in 0 1 2 3 4 5 6 7; do
  SP[r]=$(sports "${H[r / 2]}" "${H[(r ^ 4) / 2]}" $((PORT + 100 + 10 * (r % 2))) $((40000 + 2000 * (r % 2))) 500)
  [[ $(tr ',' '\n' <<<"${SP[r]}" | wc -l) -eq $PATHS ]] || { echo "bench/hier_floor.sh: no source port for every path (rank $r: ${SP[r]})" >&2; exit 1; }
done

ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo $t; }
# snap: busy-ticks softirq-ticks daemon-ticks ksoftirqd-ticks rcvbuf-errors lab-drops
snap() {
  local e=0 h
  for h in "${H[@]}"; do
    e=$((e + $(ip netns exec "$LAB-$h" awk '$1 == "Udp:" && $2 ~ /^[0-9]+$/ { print $6 }' /proc/net/snmp)))
  done
  echo "$(awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9, $8 }' /proc/stat) $(ticks $DPIDS) $(ticks $KPIDS) $e" \
    "$("$G" lab stats --name "$LAB" | awk '$1 ~ /^s[0-9]+-s[0-9]+[/]p/ { d += $7 + $8 } END { print d + 0 }')"
}
TABLE=()

# run_one MODE SIZE ONLY ROUND: one run of the 8 ranks; its row goes into TABLE.
run_one() {
  local mode=$1 size=$2 only=$3 round=$4 b tag st r pids=() a z
  b=$(bytes "$size") tag=$stamp.$mode.$size.${only//,/+}.$round
  local gso=()
  [[ $mode == gso* ]] && gso=(-gso)
  [[ $mode =~ ^gso-l([1-7])w([1-7]) ]] && gso+=(-lantrain "${BASH_REMATCH[1]}" -wantrain "${BASH_REMATCH[2]}")
  [[ $mode == *-rx ]] && gso+=(-rxwait "$RXWAIT")
  a=$(snap)
  st=$(($(date +%s%3N) + 3000))
  for r in 0 1 2 3 4 5 6 7; do
    ip netns exec "$LAB-${H[r / 2]}" nice -n "$NICE" "$BIN/hierfloor" -rank $r -hosts "$HOSTS" -size "$b" -calls "$CALLS" \
      -warmup "$WARMUP" -start $st -pieces "$PIECES" -wanrate "$WANRATE" -lanrate "$LANRATE" -only "$only" -sports "${SP[r]}" \
      -port $PORT ${gso[@]+"${gso[@]}"} >"$OUT/raw/$tag.r$r.txt" 2>&1 &
    pids+=($!)
  done
  local failed=0
  for r in "${pids[@]}"; do wait "$r" || failed=$((failed + 1)); done
  z=$(snap)
  local row
  row=$(cat "$OUT"/raw/$tag.r*.txt | awk -v a="$a" -v z="$z" -v hz="$HZ" -v n=$((CALLS + WARMUP)) -v bms="$(awk -v s="$b" -v r=$R 'BEGIN { print s / r * 1e3 }')" -v failed=$failed '
    /^hierfloor rank=/ { k++; for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      if (v["call_ms"] > t) t = v["call_ms"]; c += v["cpu_s_call"]; bad += v["bad"]; ref += v["refused"]; if (v["late_ms"] > late) late = v["late_ms"] }
    END { split(a, x, " "); split(z, y, " ")
      # A run in which any rank lost data or failed has no figure: the
      # ranks that finished had the links to fewer peers.
      if (k - failed < 8) printf "| - | - |"; else printf "| %.1f | %.1f %% |", t, (t > 0) ? 100 * bms / t : 0
      printf " %.4f | %.4f | %.4f | %.4f | %.4f | %d / %d | %d / %d / %d | %d of 8 |", c,
        (y[3] - x[3]) / hz / n, (y[4] - x[4]) / hz / n, (y[2] - x[2]) / hz / n, (y[1] - x[1]) / hz / n, y[5] - x[5], y[6] - x[6], bad, ref, late, k - failed }')
  TABLE+=("| $size | $mode | $only | $round $row $(cut -d' ' -f1 /proc/loadavg) |")
  echo "bench/hier_floor.sh: ${TABLE[-1]}" >&2
}

stamp=$(date -u +%Y%m%d-%H%M%S)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
printf '%s\n' "${SP[@]}" >"$OUT/raw/$stamp.sports"
for ((rd = 1; rd <= ROUNDS; rd++)); do
  for s in $SIZES; do for only in $ONLYS; do for m in $MODES; do run_one "$m" "$s" "$only" $rd; done; done; done
done
"$G" lab down --name "$LAB" >/dev/null
load1=$(cut -d' ' -f1-3 /proc/loadavg)
{
  echo "# bench/hier_floor.sh $stamp (UTC), commit $REV"
  echo
  echo "$(nproc) cores, load average $load0 before, $load1 after; nice $NICE; CALLS=$CALLS WARMUP=$WARMUP PIECES=$PIECES WANRATE=$WANRATE LANRATE=$LANRATE RXWAIT=$RXWAIT (the -rx modes). Time: the slowest rank's mean call (ms) and the bound (S / 100 MB/s) over it. CPU-s a call: ranks (getrusage over the timed calls, 8 summed); over the whole run / $((CALLS + WARMUP)) calls: the delay daemons, ksoftirqd, the machine's softirq and busy time (/proc/stat: all processes, other helpers' too). Drops: UDP receive-buffer errors (4 hosts) / the lab's shaper+delay drops. bad / refused / late: datagrams not counted, port unreachables met (a peer not listening yet: its datagram lost), the latest rank's ms past the common start (all its sockets open 3 s ahead else). Raw: raw/$stamp.*."
  echo
  echo "| size | mode | phases | round | call ms | of bound | ranks | daemons | ksoftirqd | softirq | machine busy | drops | bad / refused / late | ranks ok | load |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${TABLE[@]}"
} >"$OUT/table.$stamp.md"
cat "$OUT/table.$stamp.md"
