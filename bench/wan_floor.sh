#!/usr/bin/env bash
# bench/wan_floor.sh: the floor of issue 14's two-site lab. What this
# machine's emulation of the WAN (tbf shapers, userspace delay daemons, all
# on the same cores) delivers when the hierarchical AllReduce's WAN traffic
# is moved with no host-level work: 4 pairs of hosts' ranks across the
# sites, each S/4 bytes each way at once. Needs root (network namespaces),
# iproute2 and iptables.
#
# Usage: bench/wan_floor.sh
#   env: LAB (default floor), OUT (default bench/results/wan_floor),
#        MODES (default "p2p udp ring8 burst"), ROUNDS (default 2), TIME (seconds
#        each p2p/udp run sends, default 10), UDPRATES (bytes/s each udpfloor
#        pair offers, space-separated, default "25e6 27e6": the bound's
#        share and above it), BURSTS (sendrecv sizes per rank, default "8M 32M":
#        a 16 and a 64 MiB AllReduce's WAN bytes a direction), RING8
#        (ring8's sizes a hop, default "4M 16M": the same),
#        ITERS (burst timed calls, default 20), RATE (Mbit/s a path, default
#        200), DELAY (ms one way, default 2), WIN (s, default 3), NICE (default -20), GOCOLL (a
#        gocoll binary instead of a build of this tree)
#
# The lab: 2 sites x 2 hosts, 4 WAN paths x RATE Mbit/s each way, DELAY ms,
# MTU 9000. The bound: R = 4 x RATE Mbit/s one way (100 MB/s at 200).
# The hierarchical AllReduce's shard owners are rank i of site 1 and rank
# i of site 2 (i = 0..3, 2 ranks a host): s1h1<->s2h1 twice, s1h2<->s2h2
# twice. The modes move that traffic:
#   p2p:   8 concurrent 2-rank `gocoll bench p2p` jobs (MetaRoCE, rank 0 ->
#          rank 1, one connection over every path), one per owner pair and
#          direction, for TIME s. Figures: the sum of the jobs' goodput per
#          direction (their own "# total" lines: each over its own TIME s,
#          which overlap only as far as the jobs' set-ups line up, so the
#          sum can overstate, while their last messages in flight are not
#          counted, which understates; and the sum of each job's mean over
#          its 1 s interval rows from 2 s to TIME - 1 s, the steady state),
#          and the WAN's bytes per direction (the lab's
#          counters sampled every 0.5 s, headers, ACKs and resends in) over
#          the best WIN s (default 4) of the run (each sample's time the middle
#          of its read).
#   udp:   the same 8 pairs with bench/udpfloor (bare UDP, 4 sockets a
#          sender, their source ports picked onto the 4 WAN paths, no ACKs)
#          offering UDPRATE bytes/s each: received bytes over the sender's
#          seconds, summed per direction.
#   ring8: the time-shaped version: one 8-rank `gocoll bench sendrecv`
#          job (MetaRoCE, GOMAXPROCS=1, no probe) whose ranks alternate
#          sites in the order s1h1 s2h1 s1h1 s2h1 s1h2 s2h2 s1h2 s2h2 (a
#          host's namespace listed twice under two names, an rsh wrapper
#          mapping them back), so that every hop of its ring crosses the
#          WAN: site 1 -> 2 exactly the owner pairs (s1h1 -> s2h1 twice,
#          s1h2 -> s2h2 twice), site 2 -> 1 the same WAN paths from other
#          hosts (s2h1 -> s1h1, s2h1 -> s1h2, s2h2 -> s1h2, s2h2 -> s1h1).
#          A call moves 4 x SIZE a direction (4M: a 16 MiB AllReduce's WAN
#          bytes, as its 4 owner pairs of 4 MiB each way) and ends, then the
#          next starts. Figure: 4 x SIZE / the call's time (slowest rank's)
#          against R.
#   burst: the same with 2 connections a direction: one 4-rank `gocoll bench sendrecv`
#          job (MetaRoCE), a rank a host, whose ranks alternate sites
#          (hostfile order s1h1 s2h1 s1h2 s2h2, no site= fields), so that
#          every hop of its ring crosses the WAN, 2 per direction, BURST
#          bytes each (for each of BURSTS): a call moves 2 x BURST per
#          direction (a 16 MiB AllReduce's WAN bytes at 8M, in 2 connections a
#          direction where the hierarchical AllReduce has 4 of 4 MiB) and
#          ends, then the next starts. Figure: 2 x BURST / the call's time
#          (slowest rank's) against R.
# Beside each figure: the delay daemons' CPU-seconds, the machine's busy
# share of its cores over the run (/proc/stat) and the load average.
# OUT/raw keeps every run's output; OUT/table.md the figures.
set -euo pipefail
cd "$(dirname "$0")/.."

LAB=${LAB:-floor}
OUT=${OUT:-bench/results/wan_floor}
MODES=${MODES:-p2p udp ring8 burst}
ROUNDS=${ROUNDS:-2}
TIME=${TIME:-10}
UDPRATES=${UDPRATES:-25e6 27e6}
BURSTS=${BURSTS:-8M 32M}
RING8=${RING8:-4M 16M}
ITERS=${ITERS:-20}
RATE=${RATE:-200}
DELAY=${DELAY:-2}
WIN=${WIN:-4}
NICE=${NICE:--20}
PATHS=4
R=$(awk -v p=$PATHS -v r="$RATE" 'BEGIN { print p * r * 1e6 / 8 }') # bytes/s one way
REV=$(git rev-parse --short HEAD 2>/dev/null || echo '?')

. bench/lab_common.sh
lab_setup wan_floor.sh
lab_build
go build -o "$BIN/udpfloor" ./bench/udpfloor
mkdir -p "$OUT/raw"
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site 2 --paths $PATHS --rate "$RATE" --delay "$DELAY" --mtu 9000 >/dev/null
"$G" lab hostfile --name "$LAB" --slots 1 >"$BIN/hosts"
line() { grep -E "^$LAB-$1 " "$BIN/hosts"; }
addr() { line "$1" | sed -n 's/.* addr=\([0-9.]*\).*/\1/p'; }
DPIDS=$(delayd_pids)
HZ=$(getconf CLK_TCK)
busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat; } # busy idle (ticks)
# usage T0_BUSY T0_IDLE D0: "delayd CPU-s, cores busy %" since those.
usage() {
  local b i
  read -r b i <<<"$(busy)"
  awk -v b="$((b - $1))" -v i="$((i - $2))" -v d="$(($(delayd_ticks) - $3))" -v hz="$HZ" \
    'BEGIN { printf "delayd %.2f CPU-s, cores busy %.0f %%", d / hz, (b + i > 0) ? 100 * b / (b + i) : 0 }'
}
# wanbytes: "fwd rev" bytes the WAN paths sent since the lab came up (fwd: site 1 -> site 2).
wanbytes() { "$G" lab stats --name "$LAB" | awk '$1 ~ /^s[0-9]+-s[0-9]+[/]p/ { b[$2] += $5 } END { print b["fwd"] + 0, b["rev"] + 0 }'; }
rankcpu() { cat "$@" | awk '{ for (i = 1; i <= NF; i++) if ($i == "rankcpu") c += $(i + 1) + $(i + 2) } END { printf "%.2f", c }'; }
# steady FILES: the sum over the files (one p2p job each) of the mean goodput (bytes/s) of its interval rows ending in (2, TIME - 1] s.
steady() {
  local f
  for f in "$@"; do
    awk -v e="$((TIME - 1))" '$1 == "[rank" && $2 == "0]" && $3 ~ /^[0-9]+[.][0-9][0-9]$/ && $4 ~ /^[0-9.]+$/ && $3 > 2.5 && $3 <= e + 0.5 { g += $4; n++ }
      END { if (n > 0) printf "%.0f\n", g / n * 1e6 / 8; else print 0 }' "$f"
  done | awk '{ s += $1 } END { printf "%.0f", s }'
}
pct() { awk -v g="$1" -v r="$R" 'BEGIN { printf "%.1f %%", 100 * g / r }'; }

# The owner pairs: SRC DST for each job, 4 a direction.
PAIRS_UP="s1h1:s2h1 s1h1:s2h1 s1h2:s2h2 s1h2:s2h2"
PAIRS_DOWN="s2h1:s1h1 s2h1:s1h1 s2h2:s1h2 s2h2:s1h2"
TABLE=()

run_p2p() { # run_p2p ROUND
  local raw=$OUT/raw/$stamp.p2p.$1 k=0 pr s d b0 i0 d0 pids=()
  mkdir -p "$raw"
  read -r b0 i0 <<<"$(busy)"
  d0=$(delayd_ticks)
  for pr in $PAIRS_UP $PAIRS_DOWN; do
    s=${pr%:*} d=${pr#*:}
    { line "$s"; line "$d"; } >"$BIN/h.$k"
    nice -n "$NICE" "$G" run --hostfile "$BIN/h.$k" --rsh 'ip netns exec {host}' --timeout 120s -x GOCOLL_TRANSPORT=metaroce -- \
      sh -c "exec /usr/bin/time -f '# rankcpu %U %S' $G bench p2p --time ${TIME}s" >"$raw/$k.$s-$d.txt" 2>&1 &
    pids+=($!)
    k=$((k + 1))
  done
  # The lab's counters every 0.5 s over the run (a sampler of ours, ended by its pid).
  (while :; do a=$(date +%s.%N) w=$(wanbytes) b=$(date +%s.%N); echo "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", (a + b) / 2 }') $w"; sleep 0.5; done) >"$raw/wan.samples" &
  local spid=$!
  wait "${pids[@]}" || true
  kill "$spid" 2>/dev/null || true
  wait "$spid" 2>/dev/null || true
  local u; u=$(usage "$b0" "$i0" "$d0")
  local gu gd
  gu=$(cat "$raw"/*.s1h*-s2h*.txt | awk '/# total:/ { for (i = 1; i <= NF; i++) if ($i == "Mbit/s;" || $i == "Mbit/s") g += $(i - 1) } END { printf "%.0f", g * 1e6 / 8 }')
  gd=$(cat "$raw"/*.s2h*-s1h*.txt | awk '/# total:/ { for (i = 1; i <= NF; i++) if ($i == "Mbit/s;" || $i == "Mbit/s") g += $(i - 1) } END { printf "%.0f", g * 1e6 / 8 }')
  # The WAN's bytes a second per direction: the best WIN-second window of the samples.
  local wu wd
  read -r wu wd <<<"$(awk -v w="$WIN" '{ t[NR] = $1; u[NR] = $2; d[NR] = $3 }
    END { for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (t[j] - t[i] >= w) {
        ru = (u[j] - u[i]) / (t[j] - t[i]); rd = (d[j] - d[i]) / (t[j] - t[i]); if (ru > bu) bu = ru; if (rd > bd) bd = rd; break }
      printf "%.0f %.0f", bu, bd }' "$raw/wan.samples")"
  # Steady: each job's interval rows (1 s) ending after 2 s and by TIME - 1 s, their mean, summed per direction.
  local su sd
  su=$(steady "$raw"/*.s1h*-s2h*.txt) sd=$(steady "$raw"/*.s2h*-s1h*.txt)
  TABLE+=("| p2p x8 | $1 | total $(pct "$gu") / $(pct "$gd"); steady $(pct "$su") / $(pct "$sd") | best ${WIN} s: $(pct "$wu") / $(pct "$wd") | $u, ranks $(rankcpu "$raw"/*.txt) CPU-s | $(cut -d' ' -f1 /proc/loadavg) |")
  echo "bench/wan_floor.sh: ${TABLE[-1]}" >&2
}

run_udp() { # run_udp ROUND RATE
  local raw=$OUT/raw/$stamp.udp.$2.$1 k=0 pr s d b0 i0 d0 sp dp
  mkdir -p "$raw"
  local spl=()
  for pr in $PAIRS_UP $PAIRS_DOWN; do
    s=${pr%:*} d=${pr#*:}
    spl+=("$(sports "$s" "$d" $((7000 + 10 * k)) $((40000 + 1000 * k)))")
    k=$((k + 1))
  done
  read -r b0 i0 <<<"$(busy)"
  d0=$(delayd_ticks)
  k=0
  for pr in $PAIRS_UP $PAIRS_DOWN; do
    s=${pr%:*} d=${pr#*:} dp=$((7000 + 10 * k))
    nice -n "$NICE" ip netns exec "$LAB-$d" "$BIN/udpfloor" -recv -listen "$(addr "$d"):$dp" -paths $PATHS -time "${TIME}s" >"$raw/$k.$s-$d.recv" 2>&1 &
    k=$((k + 1))
  done
  sleep 0.5
  k=0
  for pr in $PAIRS_UP $PAIRS_DOWN; do
    s=${pr%:*} d=${pr#*:} dp=$((7000 + 10 * k))
    nice -n "$NICE" ip netns exec "$LAB-$s" "$BIN/udpfloor" -send -to "$(addr "$d"):$dp" -paths $PATHS -rate "$2" -time "${TIME}s" \
      ${spl[$k]:+-sports ${spl[$k]}} >"$raw/$k.$s-$d.send" 2>&1 &
    k=$((k + 1))
  done
  wait
  local u; u=$(usage "$b0" "$i0" "$d0")
  # per direction: received bytes / the sender's seconds, summed; and the udpfloor processes' CPU-seconds.
  local fig
  fig=$(for f in "$raw"/*.send; do
    r=${f%.send}.recv
    awk -v dir="$(basename "$f" | grep -q '\.s1h' && echo up || echo down)" '
      { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[$2, kv[1]] = kv[2] } }
      END { printf "%s %.0f %.3f %d %d\n", dir, v["recv", "bytes"] / v["send", "seconds"], v["send", "user"] + v["send", "sys"] + v["recv", "user"] + v["recv", "sys"], v["send", "bytes"], v["recv", "bytes"] }' "$f" "$r"
  done | awk '{ g[$1] += $2; c += $3; s += $4; r += $5 } END { printf "%.0f %.0f %.2f %.2f", g["up"], g["down"], c, (s > 0) ? 100 * r / s : 0 }')
  local gu gd c rx
  read -r gu gd c rx <<<"$fig"
  TABLE+=("| udpfloor x8 at $2 B/s a pair | $1 | $(pct "$gu") / $(pct "$gd") | received $rx % of sent | $u, udpfloor $c CPU-s | $(cut -d' ' -f1 /proc/loadavg) |")
  echo "bench/wan_floor.sh: ${TABLE[-1]}" >&2
}

# run_sendrecv ROUND SIZE HOSTFILE RSH HOPS LABEL [RUN-FLAGS...]: one
# `gocoll bench sendrecv` job of SIZE a hop (K/M suffix) over the ranks of
# HOSTFILE (rsh RSH), HOPS of the ring's hops crossing the WAN each way;
# its row (goodput: HOPS x SIZE a direction over the call's time) goes
# into TABLE, LABEL naming it. RUN-FLAGS go to gocoll run.
run_sendrecv() {
  local round=$1 size=$2 hosts=$3 rsh=$4 hops=$5 label=$6 bb b0 i0 d0 u t g
  shift 6
  local raw=$OUT/raw/$stamp.$(basename "$hosts" | sed 's/^h\.//').$size.$round.txt
  bb=$(bytes "$size")
  read -r b0 i0 <<<"$(busy)"
  d0=$(delayd_ticks)
  nice -n "$NICE" "$G" run --hostfile "$hosts" --rsh "$rsh" --timeout 300s -x GOCOLL_TRANSPORT=metaroce "$@" -- \
    sh -c "exec /usr/bin/time -f '# rankcpu %U %S' $G bench sendrecv --sizes $bb -n $ITERS -w 2" >"$raw" 2>&1 || echo "# run failed: $?" >>"$raw"
  u=$(usage "$b0" "$i0" "$d0")
  t=$(awk -v s="$bb" '$1 == "[rank" && $2 == "0]" && $3 == s { print $8 }' "$raw" | tail -1)
  g=$(awk -v s="$bb" -v h="$hops" -v t="${t:-0}" 'BEGIN { if (t > 0) printf "%.0f", h * s / (t * 1e-6) }')
  TABLE+=("| $label | $round | $(pct "${g:-0}") (call ${t:-?} us) | - | $u, ranks $(rankcpu "$raw") CPU-s | $(cut -d' ' -f1 /proc/loadavg) |")
  echo "bench/wan_floor.sh: ${TABLE[-1]}" >&2
}

run_burst() { # run_burst ROUND BURST
  local h
  # No site= fields: the ranks go in the hostfile's order, so the ring
  # 0 -> 1 -> 2 -> 3 -> 0 alternates the sites.
  for h in s1h1 s2h1 s1h2 s2h2; do line "$h" | sed 's/ site=[^ ]*//'; done >"$BIN/h.burst"
  run_sendrecv "$1" "$2" "$BIN/h.burst" 'ip netns exec {host}' 2 \
    "sendrecv 4 ranks, sites alternating, $2 a hop (2 x $2 a direction a call)"
}

run_ring8() { # run_ring8 ROUND SIZE
  local h
  # Each namespace listed twice (NAME and NAME.b, the rsh wrapper drops
  # the .b), no site= fields: the ranks go in this order, one a line.
  printf '#!/bin/sh\nh=$1; shift; exec ip netns exec "${h%%.b}" "$@"\n' >"$BIN/nsexec"
  chmod +x "$BIN/nsexec"
  for h in s1h1 s2h1 s1h1.b s2h1.b s1h2 s2h2 s1h2.b s2h2.b; do line "${h%.b}" | sed "s/ site=[^ ]*//; s/^$LAB-${h%.b} /$LAB-$h /"; done >"$BIN/h.ring8"
  run_sendrecv "$1" "$2" "$BIN/h.ring8" "$BIN/nsexec {host}" 4 \
    "sendrecv 8 ranks, the owner pairs, $2 a hop (4 x $2 a direction a call)" -x GOCOLL_PROBE=0 -x GOMAXPROCS=1
}

stamp=$(date -u +%Y%m%d-%H%M%S)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((rd = 1; rd <= ROUNDS; rd++)); do
  for m in $MODES; do
    case $m in
    p2p) run_p2p $rd ;;
    udp) for ur in $UDPRATES; do run_udp $rd "$ur"; done ;;
    burst) for b in $BURSTS; do run_burst $rd "$b"; done ;;
    ring8) for b in $RING8; do run_ring8 $rd "$b"; done ;;
    *) echo "bench/wan_floor.sh: unknown mode $m" >&2; exit 2 ;;
    esac
  done
done
"$G" lab down --name "$LAB" >/dev/null
load1=$(cut -d' ' -f1-3 /proc/loadavg)
{
  echo "# The floor of the two-site lab: the hierarchical AllReduce's WAN traffic with no host-level work"
  echo
  echo "Run $stamp (UTC) of bench/wan_floor.sh at commit $REV, $(nproc) cores, load average $load0 before, $load1 after; nice $NICE. Lab: 2 sites x 2 hosts, $PATHS WAN paths x $RATE Mbit/s, $DELAY ms one way, MTU 9000; bound R = $(awk -v r="$R" 'BEGIN { printf "%.0f", r / 1e6 }') MB/s a direction. 'goodput': payload per direction (site 1 -> 2 / 2 -> 1) as % of R (p2p: the sum of the 8 jobs' own totals, each over its own $TIME s, and the sum of their interval rows' goodput from 2 s to $((TIME - 1)) s, each job's mean; udpfloor: received bytes over the senders' seconds; sendrecv: 4 (8 ranks) or 2 (4 ranks) x the size over the call's time). 'WAN / other': p2p: the WAN paths' bytes a second per direction (the lab's counters sampled every 0.5 s, headers, ACKs and resends in) over the best $WIN s, as % of R (timed by the middle of each sample's read: a few % of jitter, hence readings above 100 %); udpfloor: the datagrams received of those sent. CPU: the delay daemons' CPU-seconds and the machine's busy share of its cores over the run. Raw: raw/$stamp.*."
  echo
  echo "| traffic | round | goodput up / down | WAN / other | CPU | load after |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${TABLE[@]}"
} >"$OUT/table.$stamp.md"
cat "$OUT/table.$stamp.md"
