#!/usr/bin/env bash
# bench/coal_ab.sh: MetaRoCE's endpoint reader (GOCOLL_MR_COALESCE,
# mrtransport.Config.CoalesceWait) against per-socket readers, on one
# connection in the two-site lab (cpu_lab.sh's: 4 WAN paths x 200 Mbit/s,
# 2 ms one way, MTU 9000), interleaved. Needs root; perf for the counts.
#
# Usage: bench/coal_ab.sh
#   env: LAB (default coal), OUT (default bench/results/cpu_lab),
#        ROUNDS (default 3), SETTINGS (GOCOLL_MR_COALESCE values, each
#        round runs them in turn; default "0 1ms", 0 = off; "default"
#        leaves it unset; "base" leaves it unset and runs BASE, a gocoll
#        binary, say main's before a change), LINKS (default
#        "wan lan": s1h1 -> s2h1 across the WAN, s1h1 -> s1h2 within a
#        site), PROCS (the ranks' GOMAXPROCS, default 1: a job rank's, see
#        cpu_lab.sh), GOCOLL (a gocoll binary instead of this tree's)
#
# Each run is `gocoll bench p2p --time 8s` (2 ranks, GOCOLL_TRANSPORT=
# metaroce) with each rank under perf stat. Per DATA datagram the sender
# sent (both ranks together): CPU-us, context switches, recvmmsg calls;
# the goodput; the endpoint readers' naps (engine counters at close).
set -euo pipefail
cd "$(dirname "$0")/.."
LAB=${LAB:-coal} OUT=${OUT:-bench/results/cpu_lab} ROUNDS=${ROUNDS:-3}
SETTINGS=${SETTINGS:-0 1ms} LINKS=${LINKS:-wan lan} PROCS=${PROCS:-1}
. bench/lab_common.sh
lab_setup coal_ab.sh
lab_build
mkdir -p "$OUT/raw"
stamp=$(date -u +%Y%m%d-%H%M%S)
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
"$G" lab hostfile --name "$LAB" --slots 1 >"$BIN/hosts"
grep -E "^$LAB-(s1h1|s2h1) " "$BIN/hosts" >"$BIN/hosts.wan"
grep -E "^$LAB-(s1h1|s1h2) " "$BIN/hosts" >"$BIN/hosts.lan"
EV=task-clock,context-switches,syscalls:sys_enter_recvmmsg,syscalls:sys_enter_sendmmsg,syscalls:sys_enter_epoll_pwait

if [[ " $SETTINGS " == *" base "* ]]; then
  [[ -n ${BASE:-} ]] || { echo "bench/coal_ab.sh: SETTINGS has base: set BASE to a gocoll binary" >&2; exit 2; }
  cp "$BASE" "$BIN/gocoll.base"
fi

# run LINK SETTING: one p2p run; prints its row.
run() {
  local raw=$OUT/raw/$stamp.coal.$1.$2.r$round.txt g=$G
  local x=(-x GOCOLL_MR_COALESCE="$2")
  case $2 in
  default) x=() ;;
  base) x=() g=$BIN/gocoll.base ;;
  esac
  rm -f "$raw".perf.*
  "$g" run --hostfile "$BIN/hosts.$1" --rsh 'ip netns exec {host}' --timeout 90s -x GOCOLL_TRANSPORT=metaroce \
    -x GOCOLL_DEBUG=info -x GOMAXPROCS="$PROCS" "${x[@]}" -- \
    sh -c "exec perf stat -x, -e $EV -o $raw.perf.\$\$ $g bench p2p --time 8s" >"$raw" 2>&1 || echo "# run failed: $?" >>"$raw"
  cat "$raw".perf.* | awk -F, '$1 ~ /^[0-9.]+$/ { printf "# perf %s %s\n", $3, $1 }' >>"$raw"
  awk -v link="$1" -v set="$2" -v load="$(cut -d' ' -f1 /proc/loadavg)" '
    /# total:/ { for (i = 1; i <= NF; i++) if ($i ~ /^Mbit\/s/) m = $(i - 1) }
    /msg="gocoll: path" rank=0 / { for (i = 1; i <= NF; i++) if ($i ~ /^packets=/) p += substr($i, 9) }
    /msg="mrtransport: engine"/ { for (i = 1; i <= NF; i++) if ($i ~ /^naps=/) naps += substr($i, 6) }
    $1 == "#" && $2 == "perf" { v[$3] += $4 }
    END { if (p == 0) { printf "| %s | %s | failed | | | | | | %s |\n", link, set, load; exit }
      printf "| %s | %s | %.1f | %d | %.2f | %.3f | %.3f | %.3f | %.3f | %s |\n", link, set, m, p,
        v["task-clock"] * 1000 / p, v["context-switches"] / p, v["syscalls:sys_enter_recvmmsg"] / p,
        v["syscalls:sys_enter_epoll_pwait"] / p, naps / p, load }' "$raw"
}

echo "bench/coal_ab.sh $stamp (UTC), $(git rev-parse --short HEAD 2>/dev/null || echo '?')${GOCOLL:+ binary $GOCOLL}, GOMAXPROCS=$PROCS, $ROUNDS rounds; per DATA datagram sent, both ranks:"
echo "| link | GOCOLL_MR_COALESCE | Mbit/s | DATA datagrams | CPU-us | context switches | recvmmsg | epoll_pwait | naps | load |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for round in $(seq "$ROUNDS"); do
  for link in $LINKS; do
    for set in $SETTINGS; do
      run "$link" "$set"
    done
  done
done
