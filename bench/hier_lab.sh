#!/usr/bin/env bash
# bench/hier_lab.sh: issue 14's first target, AllReduce in the two-site lab
# against the hierarchical WAN bound. Needs root (network namespaces),
# iproute2 and iptables.
#
# Usage: bench/hier_lab.sh
#   env: LAB (lab name, default h15hl), LAB_UP_FLAGS (more flags of `gocoll lab up`,
#        e.g. "--prio-dscp -1": the rate limiters one FIFO, no band for MetaRoCE's control class), OUT (default bench/results/hier_lab),
#        SIZES (default "16M 64M"), ITERS (timed iterations, default 5), WARMUP
#        (warm-up iterations, default 1), RATE (each WAN path's Mbit/s, default
#        200), DELAY (one-way WAN delay in ms, default 2),
#        ALGOS (default "auto ring hierarchical"), REV (the code's commit
#        for the table, default git's HEAD here: set it when running a copy),
#        GOCOLL (a gocoll binary to run instead of building this tree's, for
#        A/B; set REV with it), XENV (NAME=VALUE settings, space-separated,
#        GOCOLL_* or GOMAXPROCS, given to every rank with gocoll run -x),
#        PEER_TIMEOUT (GOCOLL_PEER_TIMEOUT for the ranks, default unset: the
#        transport's 2 s; on a machine so loaded that a rank goes unscheduled
#        that long, a longer one keeps the run from failing)
#
# The lab is the issue's: 2 sites x 2 hosts x 2 ranks (8 ranks), 4 WAN paths
# of 200 Mbit/s each way, 2 ms one way, MTU 9000. For each algorithm (auto:
# the cost model's choice; ring and hierarchical forced with --algo) it
# runs `gocoll bench allreduce` on the default transport (auto: shared memory
# in a host, MetaRoCE between hosts) under `gocoll run --rsh 'ip netns exec
# {host}'`, with GOCOLL_DEBUG_SUBSYS=COLL so rank 0's lines name the
# algorithm each AllReduce ran. OUT/raw/ keeps every run's output and the
# lab's counters; OUT/table.md gets the busbw beside the bounds.
#
# The bounds (payload only; headers are 0.5 % at MTU 9000). Let R be the
# WAN's total rate one way, 4 x 200 Mbit/s = 100 MB/s, S the buffer, n = 8.
#   hierarchical: whatever the algorithm, every element of site 1's result
#     needs site 2's partial sum, so each site receives at least S bytes per
#     direction over the WAN: time >= S / R, so algbw = S / time <= R. The
#     hierarchical AllReduce meets it with every shard owner crossing at
#     once (each rank S/4 each way). busbw = algbw x 2(n-1)/n, so its bound
#     is R x 14/8 = 0.175 GB/s.
#   ring: a flat ring of 8 in rank order crosses the WAN twice, once each
#     way (rank 3 -> 4 and 7 -> 0); each link of the ring carries 2(n-1)/n S
#     = 1.75 S, so time >= 1.75 S / R (one connection, even one spread over
#     all 4 paths as MetaRoCE does): algbw <= R / 1.75 and busbw <= R =
#     0.100 GB/s.
# GB/s is 1e9 bytes/s, as gocoll bench (and nccl-tests) print it; busbw here
# is computed from the printed time (the slowest rank's, -a 3) for three
# digits.
set -euo pipefail
cd "$(dirname "$0")/.."

LAB=${LAB:-h15hl}
OUT=${OUT:-bench/results/hier_lab}
SIZES=${SIZES:-16M 64M}
ITERS=${ITERS:-5}
WARMUP=${WARMUP:-1}
ALGOS=${ALGOS:-auto ring hierarchical}
PEER_TIMEOUT=${PEER_TIMEOUT:-}
REV=${REV:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}
XENV=${XENV:-}
XARGS=()
for kv in $XENV; do
  [[ $kv == GOCOLL_*=* || $kv == GOMAXPROCS=* ]] || { echo "bench/hier_lab.sh: XENV entry $kv: want GOCOLL_NAME=VALUE or GOMAXPROCS=N" >&2; exit 2; }
  XARGS+=(-x "$kv")
done

# The lab and its bounds.
PATHS=4 RATE=${RATE:-200} DELAY=${DELAY:-2} MTU=9000 HOSTS=2 SLOTS=2
N=$((2 * HOSTS * SLOTS))
R=$(awk -v p=$PATHS -v r=$RATE 'BEGIN { print p * r * 1e6 / 8 }') # WAN bytes/s one way
HIER_BOUND=$(awk -v r="$R" -v n=$N 'BEGIN { printf "%.3f", r / 1e9 * 2 * (n - 1) / n }')
RING_BOUND=$(awk -v r="$R" 'BEGIN { printf "%.3f", r / 1e9 }')

. bench/lab_common.sh
lab_setup hier_lab.sh
lab_build
mkdir -p "$OUT/raw"

stamp=$(date -u +%Y%m%d-%H%M%S)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" ${LAB_UP_FLAGS:-} --hosts-per-site $HOSTS --paths $PATHS --rate $RATE --delay $DELAY --mtu $MTU >/dev/null
"$G" lab hostfile --name "$LAB" --slots $SLOTS >"$BIN/hosts"

# busbw RAW SIZE FIELD: busbw (GB/s, 3 digits) from the time (us) in awk
# field FIELD (8 out-of-place, 12 in-place: "[rank" and "0]" are fields 1
# and 2) of rank 0's row for SIZE bytes.
busbw() {
  awk -v s="$2" -v c="$3" -v n=$N '$1 == "[rank" && $2 == "0]" && $3 == s { t = $c; if (t > 0) printf "%.3f", s / (t * 1e-6) / 1e9 * 2 * (n - 1) / n }' "$1" | tail -1
}
# algo RAW SIZE: the algorithms rank 0's AllReduces of SIZE bytes ran, with counts.
algo() {
  sed -n "s/^\[rank 0\] .*msg=\"gocoll: coll\" .* op=[Aa]ll[Rr]educe algo=\([a-z-]*\) bytes=$2 .*/\1/p" "$1" |
    sort | uniq -c | awk '{ printf "%s%s x%d", sep, $2, $1; sep = ", " }'
}
# wan BEFORE AFTER: the bytes the WAN's busier direction carried between two
# `gocoll lab stats` outputs (the counters are cumulative since the lab came up).
wan() {
  awk 'FNR == 1 { f++ } $1 ~ /^s[0-9]+-s[0-9]+[/]p/ { b[$2] += (f == 1 ? -$5 : $5) }
    END { m = 0; for (d in b) if (b[d] > m) m = b[d]; printf "%.0f", m }' "$1" "$2"
}
# allreduce_bytes RAW: the sum of the sizes of rank 0's AllReduces in SIZES.
allreduce_bytes() {
  local s b total=0 k
  for s in $SIZES; do
    b=$(bytes "$s")
    k=$(grep -c "^\[rank 0\] .*msg=\"gocoll: coll\" .* op=[Aa]ll[Rr]educe .* bytes=$b " "$1" || true)
    total=$((total + k * b))
  done
  echo $total
}
pct() { awk -v g="$1" -v b="$2" 'BEGIN { if (g == "") print "failed"; else printf "%.0f %%", 100 * g / b }'; }

sizes_csv=$(for s in $SIZES; do printf '%s,' "$(bytes "$s")"; done)
declare -A ROW WANS
for a in $ALGOS; do
  raw=$OUT/raw/$stamp.$a.txt
  # A forced algorithm needs no link figures: no probe as the world forms,
  # whose bulk transfers from site 1's ranks to site 2's (~32 MiB, 2.7 %
  # of S one way in this lab) WAN/S would count as the AllReduces' (auto
  # keeps its probe, which its choice needs; XENV may set GOCOLL_PROBE).
  NOPROBE=()
  [[ $a == auto ]] || NOPROBE=(-x GOCOLL_PROBE=0)
  "$G" lab stats --name "$LAB" >"$BIN/stats.before"
  echo "# bench/hier_lab.sh $stamp: algo $a, load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$raw"
  "$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 900s \
    -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL ${PEER_TIMEOUT:+-x GOCOLL_PEER_TIMEOUT=$PEER_TIMEOUT} ${NOPROBE[@]+"${NOPROBE[@]}"} ${XARGS[@]+"${XARGS[@]}"} -- \
    "$G" bench allreduce --sizes "${sizes_csv%,}" -n "$ITERS" -w "$WARMUP" --algo "$a" >>"$raw" 2>&1 ||
    echo "# run failed: $?" >>"$raw"
  "$G" lab stats --name "$LAB" >"$BIN/stats.after"
  { echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"; echo "# lab counters after the run (since the lab came up)"; cat "$BIN/stats.after"; } >>"$raw"
  # The WAN's bytes in the busier direction over the bytes of the AllReduces
  # of SIZES (the run's small ones left out): 1 for the hierarchical
  # AllReduce and 1.75 for the ring, plus headers, acknowledgements and resends.
  wb=$(wan "$BIN/stats.before" "$BIN/stats.after") ab=$(allreduce_bytes "$raw")
  WANS[$a]=$(awk -v w="$wb" -v a="$ab" 'BEGIN { if (a > 0) printf "%.2f", w / a; else print "?" }')
  echo "# WAN bytes in the busier direction during the run: $wb, over $ab bytes of AllReduces of $SIZES: ${WANS[$a]}" >>"$raw"
  for s in $SIZES; do
    b=$(bytes "$s")
    o=$(busbw "$raw" "$b" 8) i=$(busbw "$raw" "$b" 12)
    ran=$(algo "$raw" "$b")
    ROW[$a.$s]="| $s | $a | ${ran:-?} | ${o:-failed} ($(pct "$o" "$HIER_BOUND")) | ${i:-failed} ($(pct "$i" "$HIER_BOUND")) |"
    [[ $a == ring ]] && ROW[$a.$s]+=" ring: $(pct "$o" "$RING_BOUND") / $(pct "$i" "$RING_BOUND") of its $RING_BOUND |"
    [[ $a == ring ]] || ROW[$a.$s]+=" |"
    ROW[$a.$s]+=" ${WANS[$a]} |"
    echo "bench/hier_lab.sh: $s $a ($ran): busbw $o / $i GB/s (bound $HIER_BOUND)" >&2
  done
done
"$G" lab down --name "$LAB" >/dev/null
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# The same lab in gocoll sim (virtual time: the algorithms with an ideal
# transport and no CPU cost): the WAN as one lane of the 4 paths' total,
# as MetaRoCE spreads each connection over every path; the LAN and shared
# memory at gocoll sim's defaults. So the lab's shortfall from the bound
# splits into the algorithm's (sim) and the transport's and CPU's (the rest).
sim=$OUT/raw/$stamp.sim.txt
"$G" sim --sites 2 --hosts-per-site $HOSTS --ranks-per-host $SLOTS --wan-delay ${DELAY}ms \
  --wan-bw "$(awk -v r="$R" 'BEGIN { printf "%.0f", r }')" --wan-paths 1 --algo ring,hierarchical \
  allreduce $SIZES >"$sim" 2>&1 || echo "# sim failed: $?" >>"$sim"
simbw() { awk -v s="$1" -v a="$2" '$1 == s && $2 == a { print $6 }' "$sim"; }

table=$OUT/table.md
{
  echo "# AllReduce in the two-site lab against the hierarchical WAN bound"
  echo
  echo "Run $stamp (UTC) of bench/hier_lab.sh at commit $REV${XENV:+ with $XENV}, $(nproc) cores, kernel $(uname -r); load average (1/5/15 min) $load0 before, $load1 after. The machine was shared with other work (other helpers' builds, tests and benchmarks) while it ran: the figures are one run on a loaded 2-core machine, not the best the code does."
  echo
  echo "Lab: 2 sites x $HOSTS hosts x $SLOTS ranks ($N ranks), $PATHS WAN paths x $RATE Mbit/s each way, $DELAY ms one way, MTU $MTU; default transport (shm in a host, MetaRoCE between hosts); \`gocoll bench allreduce --sizes ... -n $ITERS -w $WARMUP --algo A\` (time: the slowest rank's)${PEER_TIMEOUT:+, GOCOLL_PEER_TIMEOUT=$PEER_TIMEOUT}. busbw in GB/s (1e9 B/s) from the printed time, out-of-place and in-place, with its share of the hierarchical WAN bound $HIER_BOUND GB/s (each site receives S bytes per direction over ${PATHS}x$RATE Mbit/s = $(awk -v r="$R" 'BEGIN { printf "%.0f", r / 1e6 }') MB/s: algbw <= that rate, busbw bound = algbw bound x 2(n-1)/n); the ring's own bound is $RING_BOUND GB/s (1.75 S through one crossing per direction). 'ran': the algorithm rank 0's AllReduces of that size ran (GOCOLL_DEBUG_SUBSYS=COLL), with counts (warm-up, check and timed calls). 'WAN/S': the bytes the WAN's busier direction carried during the run (the lab's counters, both sizes together) over the bytes of those AllReduces: the algorithm's share is 1 (hierarchical) or 1.75 (ring), the rest is packet headers, acknowledgements and resends (and, for auto, the probe's bulk transfers as the world forms: the forced algorithms run with GOCOLL_PROBE=0). Raw output and the lab's counters: raw/$stamp.*.txt."
  echo
  echo "| size | --algo | ran | busbw out-of-place (of $HIER_BOUND) | busbw in-place (of $HIER_BOUND) | ring against its own bound | WAN/S |"
  echo "|---|---|---|---|---|---|---|"
  for s in $SIZES; do for a in $ALGOS; do echo "${ROW[$a.$s]}"; done; done
  echo
  echo "gocoll sim of the same lab (virtual time, the WAN one lane of $(awk -v r="$R" 'BEGIN { printf "%.0f", r / 1e6 }') MB/s, LAN and shared memory at the sim's defaults; raw/$stamp.sim.txt), busbw (of $HIER_BOUND):"
  for s in $SIZES; do
    h=$(simbw "$s" hierarchical) g=$(simbw "$s" ring)
    echo "- $s: hierarchical ${h:-?} ($(pct "$h" "$HIER_BOUND")), ring ${g:-?} ($(pct "$g" "$RING_BOUND") of its $RING_BOUND)"
  done
} >"$table"
cat "$table"
