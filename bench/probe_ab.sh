#!/usr/bin/env bash
# bench/probe_ab.sh: two commits' link probe (collective/tune/probe) in the
# two-site lab of bench/model_lab.sh, interleaved, so that both see the
# same load: how often each job's probe reads the WAN below what its 4
# links give (issue 14: a job priced over a low figure misses the cost
# model's 15 % band).
#
# Usage: bench/probe_ab.sh OLD NEW      (commits; needs root)
#   env: LAB (default probeab), ROUNDS (default 10), LOW (MB/s, default 85:
#        a figure under it counts as low), OUT (a directory for each job's
#        output; default a temporary one, removed)
#
# Each commit is built from `git archive` (bench/build_revs.sh). Each round runs OLD then NEW:
# a job of 8 ranks (2 sites x 2 hosts x 2 ranks, 4 WAN paths x 200
# Mbit/s, 2 ms, MTU 9000) doing one 8-byte AllReduce, which probes the
# links as it forms (GOCOLL_DEBUG=info: its "link figures" and "probe
# bandwidth" lines). Per job: the WAN figure and where it came from
# (wanfrom), and how long the probe took; per binary: the figures sorted,
# their median, how many are under LOW, the probe's median time and range.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -eq 2 ]] || { echo "usage: bench/probe_ab.sh OLD NEW" >&2; exit 2; }
LAB=${LAB:-probeab} ROUNDS=${ROUNDS:-10} LOW=${LOW:-85}
. bench/lab_common.sh
. bench/build_revs.sh
lab_setup probe_ab.sh
build_revs "$BIN" "$1" "$2"
ln -s "gocoll-${labels[0]}" "$BIN/old"
ln -s "gocoll-${labels[1]}" "$BIN/new"
cp "$BIN/new" "$G"
OUT=${OUT:-$BIN/out}
mkdir -p "$OUT"
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
"$G" lab hostfile --name "$LAB" --slots 2 >"$BIN/hosts"
# secs DURATION: a Go duration (rank 0's "took") in seconds.
secs() {
  awk -v t="$1" 'BEGIN { m = 0; if (t ~ /^[0-9]+m[0-9]/) { m = 60 * substr(t, 1, index(t, "m") - 1); t = substr(t, index(t, "m") + 1) }
    v = t + 0; if (t ~ /ms$/) v /= 1e3; else if (t ~ /µs$/) v /= 1e6; printf "%.3f", m + v }'
}
for round in $(seq "$ROUNDS"); do
  for v in old new; do
    raw=$OUT/$round.$v.txt
    load=$(cut -d' ' -f1 /proc/loadavg)
    "$BIN/$v" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 300s \
      -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=INIT -x GOCOLL_TOPO_DUMP="${raw%.txt}.topo.json" -- \
      "$BIN/$v" bench allreduce --sizes 8 -n 1 -w 0 -c 0 >"$raw" 2>&1 || echo "# failed" >>"$raw"
    wan=$(awk '/"wan": *[{]/ { w = 1 } w && /"bandwidth"/ { gsub(/[^0-9.e+-]/, "", $2); printf "%.1f", $2 / 1e6; exit }' "${raw%.txt}.topo.json" 2>/dev/null || true)
    took=$(sed -n 's/^\[rank 0\] .*msg="gocoll: link figures".* took=\([^ ]*\).*/\1/p' "$raw" | head -1)
    echo "$v ${wan:-?} $(secs "${took:-0}") $load $(wanfrom "$raw" | tr ' ' '_')" >>"$BIN/rows"
    echo "round $round $v: WAN ${wan:-?} MB/s ($(wanfrom "$raw")), probe took ${took:-?}, load $load" >&2
  done
done
echo "# binary: WAN figures MB/s sorted | median | under $LOW | probe took s, median (range) | load (1 min) range"
for v in old new; do
  awk -v v="$v" -v low="$LOW" '
    function sort(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } }
    function med(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    $1 == v && $2 != "?" { n++; w[n] = $2; t[n] = $3; l[n] = $4; if ($2 < low) under++ }
    END {
      if (!n) { print v ": no rows"; exit }
      sort(w, n); sort(t, n); sort(l, n); s = ""
      for (i = 1; i <= n; i++) s = s " " w[i]
      printf "%s (%d jobs):%s | %.1f | %d | %.3f (%.3f-%.3f) | %s-%s\n", v, n, s, med(w, n), under, med(t, n), t[1], t[n], l[1], l[n]
    }' "$BIN/rows"
done
