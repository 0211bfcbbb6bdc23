#!/usr/bin/env bash
# bench/delayd_ab.sh: the lab delay daemon's CPU per MB and release
# precision, interleaved A/B between commits. Needs root (network
# namespaces), iproute2 and iptables.
#
# Usage: bench/delayd_ab.sh REV...   (e.g. bench/delayd_ab.sh fb01795 HEAD)
#   env: LAB (lab name prefix, default dab), ROUNDS (default 2), SECS
#        (seconds of traffic per run, default 8), DELAY (ms one way,
#        default 2), SLACKS (GOCOLL_DELAYD_SLACK_US values for each rev,
#        default "-": unset; a rev without the setting ignores it)
#
# Each run: cpu_lab.sh's WAN (2 sites x 2 hosts, 4 paths x 200 Mbit/s,
# MTU 9000, DELAY ms one way), one MetaRoCE connection s1h1 -> s2h1 for
# SECS (`gocoll bench p2p`), the daemons' CPU from /proc before and after
# (both routers: the data one way, the ACKs the other), per MB sent; then
# each daemon's trace (GOCOLL_DELAYD_TRACE, SIGUSR1): packets, and release
# lateness (release - due; due = arrival + delay) p50/p99/max in µs, and
# the share released early. The arrival is the daemon's clock at reading
# before 9a74b9b, the kernel's receive stamp since.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) -eq 0 ]] || { echo "bench/delayd_ab.sh: needs root" >&2; exit 2; }
(($# > 0)) || { echo "usage: bench/delayd_ab.sh REV..." >&2; exit 2; }
LAB=${LAB:-dab} ROUNDS=${ROUNDS:-2} SECS=${SECS:-8} DELAY=${DELAY:-2} SLACKS=${SLACKS:--}
. bench/build_revs.sh
labels=()
W=$(mktemp -d)
chmod 755 "$W"
trap 'for l in "${labels[@]}"; do "$W/gocoll-$l" lab down --name "$LAB" >/dev/null 2>&1 || true; done; rm -rf "$W"' EXIT
build_revs "$W" "$@" >/dev/null
HZ=$(getconf CLK_TCK)

# one BIN SLACK: one run; prints its result line.
one() {
  local G=$1 slack=$2 pids t0 t1 p mib
  "$G" lab down --name "$LAB" >/dev/null 2>&1 || true
  env ${slack:+GOCOLL_DELAYD_SLACK_US=$slack} GOCOLL_DELAYD_TRACE="$W/trace" \
    "$G" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay "$DELAY" --mtu 9000 >/dev/null
  "$G" lab hostfile --name "$LAB" --slots 1 | grep -E "^$LAB-(s1h1|s2h1) " >"$W/hosts"
  pids=$(pgrep -f "lab delayd --config /run/gocoll-lab/$LAB/")
  ticks() { local t=0 p; for p in $pids; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done; echo $t; }
  t0=$(ticks)
  "$G" run --hostfile "$W/hosts" --rsh 'ip netns exec {host}' --timeout 90s -x GOCOLL_TRANSPORT=metaroce -- \
    "$G" bench p2p --time "${SECS}s" >"$W/out" 2>&1 || echo "# run failed" >>"$W/out"
  t1=$(ticks)
  rm -f "$W"/trace.*
  for p in $pids; do kill -USR1 "$p"; done
  sleep 3
  "$G" lab down --name "$LAB" >/dev/null
  mib=$(awk '/# total:/ { for (i = 1; i <= NF; i++) if ($i == "MiB") m = $(i - 1) } END { print m + 0 }' "$W/out")
  printf 'MiB %s delayd %.2f CPU-ms/MB' "$mib" "$(awk -v d=$((t1 - t0)) -v hz="$HZ" -v m="$mib" 'BEGIN { print (m > 0) ? d / hz * 1000 / (m * 1.048576) : -1 }')"
  cat "$W"/trace.* | grep -v '^#' | awk '{ print $6 - $5 }' | sort -n | awk '
    { v[NR] = $1; if ($1 < 0) e++ }
    END { if (NR) printf "; packets %d, lateness us p50 %.0f p99 %.0f max %.0f, early %.1f %%", NR, v[int(NR * .5) + 1] / 1e3, v[int(NR * .99) + 1] / 1e3, v[NR] / 1e3, 100 * e / NR }'
  echo
}

echo "# bench/delayd_ab.sh $* at $(date -u +%FT%TZ), $(nproc) cores, delay $DELAY ms, $SECS s per run"
for r in $(seq "$ROUNDS"); do
  for l in "${labels[@]}"; do
    for s in $SLACKS; do
      [[ $s == - ]] && s=
      echo "round $r rev $l slack ${s:-default} load $(cut -d' ' -f1 /proc/loadavg): $(one "$W/gocoll-$l" "$s")"
    done
  done
done
