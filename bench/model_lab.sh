#!/usr/bin/env bash
# bench/model_lab.sh: issue 14's cost model against the two-site lab, and
# the cost of Config.Deterministic there. Needs root (network namespaces),
# iproute2 and iptables.
#
# Usage: bench/model_lab.sh
#   env: LAB (lab name, default probeml), OUT (default bench/results/model_lab),
#        SIZES (default "8 64K 4M 256M"), ALGOS (default "ring tree hierarchical";
#        may include recursive-doubling and auto: the model's own choice as the job
#        makes it), ALGO_MAX (e.g. "recursive-doubling=1M": an algorithm run only
#        at sizes up to that, to keep a sweep's time sane),
#        ROUNDS (interleaved rounds of every algorithm at every size, default 2),
#        DET_SIZE (default 64M) and DET_ROUNDS (default 3): the Deterministic
#        A/B, "" skips it; REV (the code's commit, default git's HEAD here);
#        GOCOLL (a gocoll binary to run and to predict with, e.g. another
#        commit's for an A/B: then set REV to its commit; default a build of
#        this tree)
#
# The lab is the issue's (bench/hier_lab.sh's): 2 sites x 2 hosts x 2 ranks,
# 4 WAN paths of 200 Mbit/s each way, 2 ms one way, MTU 9000, the default
# transport (shared memory in a host, MetaRoCE between hosts).
#
# 1. Each algorithm forced (`gocoll bench allreduce --algo A`), each size a
#    run of its own, the algorithms interleaved, ROUNDS times. Each run
#    probes the links as it forms (launcher/probe.go: ping-pongs and one
#    bulk transfer per level, on by default where a job spans hosts) and
#    writes them with its ranks as a version 2 topology file
#    (GOCOLL_TOPO_DUMP: raw/STAMP.A.SIZE.ROUND.topo.json); its INIT lines
#    say how long the probe took. Measured: the slowest rank's mean time
#    per call (-a 3), out of place; also rank 0's fastest call (from its
#    COLL lines: a lower bound of the operation's time, as rank 0 may enter
#    after the others), its first timed call (all ranks start it at about
#    once, after the bench's barrier, as the model prices a call; the
#    others run back to back) and the CPU the job's processes used over the run's
#    wall time (cores), against the load average: the evidence of a
#    loaded machine.
# 2. The model's prediction for the same job: `gocoll topo --explain SIZE
#    --topology THAT-RUN'S-FILE --chunk C`, C the chunk the job's
#    transport uses (its INIT line "chunk="); beside it the same without
#    the CPU term (--no-cpu: the probe's CPU figures left out) and the
#    model's CPU per call (all ranks), against the job's measured one,
#    and the prediction without the levels' cold latency (the file's
#    "latency_cold" taken out: the model before it had the figure,
#    collective/tune/cold.go; the same where the probe measured none).
#    `gocoll sim --topology THAT-FILE` runs the same algorithm in virtual
#    time over a fabric of those figures (no CPU cost): model against sim
#    checks the model's accounting of the algorithm, sim against the lab
#    the transport and the machine.
# 3. The table: for the run with the lowest mean of each algorithm and
#    size, measured, predicted, measured/predicted (target 0.85-1.15) in
#    OUT/table.md, with the load average before and after; beside it the
#    round that run was (its probe's WAN bandwidth, which its prediction
#    priced) and every round's mean/predicted, each over its own probe:
#    runs are picked by their time, never by their probe, and a cell
#    whose rounds disagree shows it.
#    With auto among ALGOS: what auto ran (its COLL lines), what `gocoll
#    topo --explain` chooses on that run's file (the same size and chunk
#    the job priced: they should agree), and auto's mean against the best
#    forced algorithm's at that size (target: auto/best <= 1.10), in the
#    table's second part; auto's 'predicted' is the model's for the
#    algorithm it ran. The same by median (each algorithm's lowest median
#    call of its rounds): short jobs' means carry their slowest calls.
# 4. Deterministic: DET_SIZE AllReduce (auto algorithm) with and without
#    GOCOLL_DETERMINISTIC=1, interleaved, DET_ROUNDS rounds each.
set -euo pipefail
cd "$(dirname "$0")/.."

LAB=${LAB:-probeml}
OUT=${OUT:-bench/results/model_lab}
SIZES=${SIZES:-8 64K 4M 256M}
ALGOS=${ALGOS:-ring tree hierarchical}
ALGO_MAX=${ALGO_MAX:-}
ROUNDS=${ROUNDS:-2}
DET_SIZE=${DET_SIZE-64M}
DET_ROUNDS=${DET_ROUNDS:-3}
REV=${REV:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}

PATHS=4 RATE=200 DELAY=2 MTU=9000 HOSTS=2 SLOTS=2
. bench/lab_common.sh
lab_setup model_lab.sh
lab_build
mkdir -p "$OUT/raw"
OUT=$(cd "$OUT" && pwd) # the ranks write their topology files there
stamp=$(date -u +%Y%m%d-%H%M%S)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site $HOSTS --paths $PATHS --rate $RATE --delay $DELAY --mtu $MTU >/dev/null
"$G" lab hostfile --name "$LAB" --slots $SLOTS >"$BIN/hosts"
# grun ARGS...: a job in the lab.
grun() { "$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 900s "$@"; }

# iters BYTES: timed iterations, warm-ups and checks for a size: a few
# seconds per run at most. Up to 16 MiB, 2 warm-ups: the timed calls start
# at the job's third, as the model's opening term prices a call
# (collective/tune/opening.go): a job's first MetaRoCE calls between the
# sites still size their windows. In virtual time (mrtransport's
# TestWANSimHierarchical, the lab's fabric with its priority band, 4 seeds)
# the hierarchical 4 MiB AllReduce took 101 ms on its first call,
# 52-82 on its second and 49-64 after; in the quiet windows' lab runs its
# first timed call after one warm-up was 1.24-1.33x its run's median (ring
# 0.97, tree 1.05; bench/results/model_lab/model29.md).
iters() {
  if (($1 <= 65536)); then echo "-n 50 -w 5 -c 1"; elif (($1 <= 16 << 20)); then echo "-n 5 -w 2 -c 1"; else echo "-n 2 -w 1 -c 0"; fi
}
# usec RAW BYTES: the out-of-place time (us) of rank 0's row for BYTES.
usec() { awk -v s="$2" '$1 == "[rank" && $2 == "0]" && $3 == s { print $8 }' "$1" | tail -1; }
# ran RAW BYTES: the algorithms rank 0's AllReduces of BYTES ran, with counts.
ran() {
  sed -n "s/^\[rank 0\] .*msg=\"gocoll: coll\" .* op=[Aa]ll[Rr]educe algo=\([a-z/0-9-]*\) bytes=$2 .*/\1/p" "$1" |
    sort | uniq -c | awk '{ printf "%s%s x%d", sep, $2, $1; sep = ", " }'
}

# calls RAW BYTES: rank 0's AllReduces of BYTES (its COLL lines), in
# seconds, in the order they ran.
calls() {
  sed -n "s/^\[rank 0\] .*op=[Aa]ll[Rr]educe algo=[^ ]* bytes=$2 took=\([^ ]*\).*/\1/p" "$1" |
    awk '{ t = $1; v = t + 0; if (t ~ /ms$/) v /= 1e3; else if (t ~ /µs$/) v /= 1e6; else if (t ~ /ns$/) v /= 1e9; print v }'
}
# first RAW BYTES: rank 0's first timed AllReduce of BYTES (after the
# warm-ups, iters' -w, and the bench's barrier: every rank starts it at
# about once, as the model prices a call, give or take the barrier's
# own spread, up to a WAN latency), in seconds.
first() {
  local w
  w=$(iters "$2" | awk '{ for (i = 1; i < NF; i++) if ($i == "-w") print $(i + 1) }')
  calls "$1" "$2" | sed -n "$((w + 1))p"
}
# fastest RAW BYTES: rank 0's fastest AllReduce of BYTES, in seconds.
fastest() { calls "$1" "$2" | sort -g | head -1; }
# median RAW BYTES: rank 0's median AllReduce of BYTES, in seconds.
median() { calls "$1" "$2" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# predict TOPO BYTES ALGO CHUNK [--no-cpu]: the model's time in seconds.
predict() {
  "$G" topo --explain "$2" --topology "$1" --coll allreduce --chunk "$4" ${5:-} |
    awk -v a="$3" '$1 == a { sub(/ *\(chosen.*$/, ""); t = $NF; v = t + 0; if (t ~ /ms$/) v /= 1e3; else if (t ~ /µs$/) v /= 1e6; else if (t ~ /ns$/) v /= 1e9; print v; exit }'
}
# hot TOPO: a copy of TOPO without its levels' "latency_cold" (the last
# key of a level, so its line and the comma before it go), in $BIN.
hot() {
  sed -z 's/,\n *"latency_cold": "[^"]*"//g' "$1" >"$BIN/hot.topo.json"
  echo "$BIN/hot.topo.json"
}
# modelcpu TOPO BYTES ALGO CHUNK: the model's CPU seconds per call, all
# ranks (explain's CPU column; empty where the CPU term is off).
modelcpu() {
  "$G" topo --explain "$2" --topology "$1" --coll allreduce --chunk "$4" |
    awk -v a="$3" '$1 == "algorithm" { cpu = $2 == "CPU" } cpu && $1 == a { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9.]+(ns|µs|ms|s)$/) { t = $i; v = t + 0; if (t ~ /ms$/) v /= 1e3; else if (t ~ /µs$/) v /= 1e6; else if (t ~ /ns$/) v /= 1e9; printf "%.3g", v; exit } }'
}
# simulate TOPO BYTES ALGO CHUNK: gocoll sim's time in seconds.
simulate() {
  "$G" sim --topology "$1" --algo "$3" --chunk "$4" allreduce "$2" |
    awk -v a="$3" '$2 == a { t = $4; v = t + 0; if (t ~ /ms$/) v /= 1e3; else if (t ~ /µs$/) v /= 1e6; else if (t ~ /ns$/) v /= 1e9; print v; exit }'
}
# chunk RAW: the chunk (bytes) rank 0's transport line gives.
chunk() {
  local c
  c=$(sed -n 's/^\[rank 0\] .*msg="gocoll: transport per peer".* chunk=\([0-9.]*\)MiB.*/\1/p' "$1" | head -1)
  awk -v c="${c:-0.5}" 'BEGIN { printf "%d", c * 1048576 }'
}
# cpu_per_call RAW BYTES: the job's CPU seconds (all ranks) per AllReduce
# of BYTES it ran (rank 0's count; the set-up's CPU included).
cpu_per_call() {
  local k
  k=$(grep -c "^\[rank 0\] .*op=[Aa]ll[Rr]educe .* bytes=$2 " "$1" || true)
  awk -v k="$k" '$1 == "#" && $2 == "cpu" { if (k > 0) printf "%.3g", ($3 + $4) / k }' "$1"
}
# ranalgo RAW BYTES: the algorithm rank 0's AllReduces of BYTES ran most.
ranalgo() {
  sed -n "s/^\[rank 0\] .*msg=\"gocoll: coll\" .* op=[Aa]ll[Rr]educe algo=\([a-z/0-9-]*\) bytes=$2 .*/\1/p" "$1" |
    sort | uniq -c | sort -rn | awk '{ print $2; exit }'
}
# chosen TOPO BYTES CHUNK: the algorithm `gocoll topo --explain` chooses.
chosen() {
  "$G" topo --explain "$2" --topology "$1" --coll allreduce --chunk "$3" | awk '/\(chosen/ { print $1; exit }'
}
# skipped ALGO BYTES: whether ALGO_MAX leaves ALGO out at BYTES.
skipped() {
  local kv
  for kv in $ALGO_MAX; do
    if [[ ${kv%%=*} == "$1" ]] && (($2 > $(bytes "${kv#*=}"))); then return 0; fi
  done
  return 1
}
# wanbw TOPO: the WAN level's bandwidth (B/s) in a run's topology dump.
wanbw() { awk '/"wan": *[{]/ { w = 1 } w && /"bandwidth"/ { gsub(/[^0-9.e+-]/, "", $2); print $2; exit }' "$1" 2>/dev/null || true; }
# cores RAW: the CPU the job used over its wall time (/usr/bin/time's line).
cores() { awk '$1 == "#" && $2 == "cpu" { if ($5 > 0) printf "%.2f", ($3 + $4) / $5 }' "$1"; }

# 1. The runs, interleaved.
declare -A BEST PRED SIM FAST FIRST MED RAN CORES LOADS TOOK CPU PREDX PREDH MCPU CHOSE ROUND WANBW RATIOS MEDBEST WANFROM
for round in $(seq "$ROUNDS"); do
  for s in $SIZES; do
    b=$(bytes "$s")
    for a in $ALGOS; do
      if skipped "$a" "$b"; then continue; fi
      raw=$OUT/raw/$stamp.$a.$s.$round.txt
      load=$(cut -d' ' -f1 /proc/loadavg)
      echo "# bench/model_lab.sh $stamp: algo $a, size $s, round $round, load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$raw"
      # shellcheck disable=SC2046
      /usr/bin/time -f '# cpu %U %S %e' -o "$BIN/time" "$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 900s \
        -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL,INIT -x GOCOLL_TOPO_DUMP="${raw%.txt}.topo.json" -- \
        "$G" bench allreduce --sizes "$b" $(iters "$b") --algo "$a" >>"$raw" 2>&1 || echo "# run failed: $?" >>"$raw"
      { cat "$BIN/time"; echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"; } >>"$raw"
      t=$(usec "$raw" "$b")
      m=$a # the model's algorithm: auto's is the one it ran
      if [[ $a == auto ]]; then m=$(ranalgo "$raw" "$b"); fi
      p=$(predict "${raw%.txt}.topo.json" "$b" "$m" "$(chunk "$raw")" 2>/dev/null || true)
      sim=$(simulate "${raw%.txt}.topo.json" "$b" "$m" "$(chunk "$raw")" 2>/dev/null || true)
      px=$(predict "${raw%.txt}.topo.json" "$b" "$m" "$(chunk "$raw")" --no-cpu 2>/dev/null || true)
      mc=$(modelcpu "${raw%.txt}.topo.json" "$b" "$m" "$(chunk "$raw")" 2>/dev/null || true)
      ph=$(predict "$(hot "${raw%.txt}.topo.json")" "$b" "$m" "$(chunk "$raw")" 2>/dev/null || true)
      ch=$(chosen "${raw%.txt}.topo.json" "$b" "$(chunk "$raw")" 2>/dev/null || true)
      w=$(wanbw "${raw%.txt}.topo.json")
      RATIOS[$a.$s]="${RATIOS[$a.$s]:+${RATIOS[$a.$s]}, }$(awk -v m="$t" -v p="$p" -v w="$w" 'BEGIN { if (m == "" || p == "") printf "?"; else printf "%.2f", m * 1e-6 / p; if (w != "") printf " (%.1f)", w / 1e6 }')"
      md=$(median "$raw" "$b")
      if [[ -n $md ]] && { [[ -z ${MEDBEST[$a.$s]:-} ]] || awk -v t="$md" -v b="${MEDBEST[$a.$s]}" 'BEGIN { exit !(t < b) }'; }; then
        MEDBEST[$a.$s]=$md
      fi
      if [[ -n $t ]] && { [[ -z ${BEST[$a.$s]:-} ]] || awk -v t="$t" -v b="${BEST[$a.$s]}" 'BEGIN { exit !(t < b) }'; }; then
        BEST[$a.$s]=$t CHOSE[$a.$s]=$ch ROUND[$a.$s]=$round WANBW[$a.$s]=$w WANFROM[$a.$s]=$(wanfrom "$raw") PRED[$a.$s]=$p SIM[$a.$s]=$sim PREDX[$a.$s]=$px PREDH[$a.$s]=$ph MCPU[$a.$s]=$mc FAST[$a.$s]=$(fastest "$raw" "$b") FIRST[$a.$s]=$(first "$raw" "$b") MED[$a.$s]=$(median "$raw" "$b") RAN[$a.$s]=$(ran "$raw" "$b")
        CORES[$a.$s]=$(cores "$raw") LOADS[$a.$s]=$load CPU[$a.$s]=$(cpu_per_call "$raw" "$b")
        TOOK[$a.$s]=$(sed -n 's/^\[rank 0\] .*msg="gocoll: link figures".* took=\([^ ]*\).*/\1/p' "$raw" | head -1)
      fi
      echo "bench/model_lab.sh: round $round $s $a (ran $(ran "$raw" "$b"); explain chooses ${ch:-?}): ${t:-failed} us, predicted ${p:-?} s (${px:-?} s without the CPU term), $(cores "$raw") cores at load $load" >&2
    done
  done
done

# 4. Deterministic against the default, interleaved.
declare -a DET_A DET_B DET_RAN
if [[ -n $DET_SIZE ]]; then
  db=$(bytes "$DET_SIZE")
  for round in $(seq "$DET_ROUNDS"); do
    for det in 0 1; do
      raw=$OUT/raw/$stamp.det$det.$round.txt
      echo "# bench/model_lab.sh $stamp: GOCOLL_DETERMINISTIC=$det, round $round, load before: $(cut -d' ' -f1-3 /proc/loadavg)" >"$raw"
      grun -x GOCOLL_DETERMINISTIC=$det -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL -- \
        "$G" bench allreduce --sizes "$db" -n 3 -w 1 -c 1 >>"$raw" 2>&1 || echo "# run failed: $?" >>"$raw"
      t=$(usec "$raw" "$db")
      if [[ $det == 0 ]]; then DET_A+=("${t:-failed}"); else DET_B+=("${t:-failed}"); fi
      DET_RAN[$det]=$(ran "$raw" "$db")
      echo "bench/model_lab.sh: deterministic=$det round $round: ${t:-failed} us ($(ran "$raw" "$db"))" >&2
    done
  done
fi
"$G" lab down --name "$LAB" >/dev/null
load1=$(cut -d' ' -f1-3 /proc/loadavg)

fmt_s() { awk -v v="$1" 'BEGIN { if (v == "") print "?"; else if (v >= 1) printf "%.3f s", v; else if (v >= 1e-3) printf "%.2f ms", v * 1e3; else printf "%.1f us", v * 1e6 }'; }
fmt_r() { awk -v m="$1" -v p="$2" 'BEGIN { if (m == "" || p == "") print "?"; else printf "%.2f", m / p }'; }
table=$OUT/table.md
{
  echo "# The cost model against the two-site lab"
  echo
  echo "Run $stamp (UTC) of bench/model_lab.sh at commit $REV, $(nproc) cores; load average (1/5/15 min) $load0 before, $load1 after. The machine was shared with other work: the measured times are upper bounds of what the code does (the run with the lowest mean of $ROUNDS interleaved rounds is kept)."
  echo
  echo "Lab: 2 sites x $HOSTS hosts x $SLOTS ranks, $PATHS WAN paths x $RATE Mbit/s each way, $DELAY ms one way, MTU $MTU; default transport. Each run probed its links as it formed (the probe is on by default where a job spans hosts) and wrote them (GOCOLL_TOPO_DUMP, raw/STAMP.ALGO.SIZE.ROUND.topo.json); 'predicted' is \`gocoll topo --explain SIZE --topology THAT-FILE --coll allreduce --chunk C\` (C: the run's transport chunk). 'mean': \`gocoll bench allreduce --sizes SIZE --algo A\`'s time (the slowest rank's mean per call, out of place); 'fastest' and 'median': rank 0's fastest and median call (its COLL lines; the fastest is a lower bound, as rank 0 may enter after the others; the median, of the -n calls, is less sensitive to a loaded machine than the mean); 'first': rank 0's first timed call, which every rank starts at about once (after the bench's barrier), as the model prices a call, where the others follow one another and a rank starts its next call while others end theirs (rank 0 may leave the barrier up to a WAN latency after the others: read it where a call takes many WAN latencies, 4 MiB and up; bench/results/model_lab/model29.md); 'sim': \`gocoll sim --topology THAT-FILE --algo A --chunk C allreduce SIZE\`, the same algorithm in virtual time over those figures (no CPU cost, and an ideal transport: no opening round trips, which 'predicted' prices, collective/tune/opening.go); 'cores': the CPU time of the job's processes over the run's wall time, at the 1-minute load average 'load' when it started; 'CPU/call': the job's CPU seconds (all 8 ranks, set-up included) per AllReduce of that size, so CPU/call / $(nproc) is the least time the machine allows with every core the job's; 'model CPU/call': the model's CPU for the call (the probe's CPU a byte, alone and with every pair of the level busy, and a message per level, collective/tune/cpu.go), without the set-up; 'no CPU term': the prediction with the probe's CPU figures left out (\`gocoll topo --no-cpu\`), the model before it had the term; 'no cold': the prediction without the levels' cold latency (the file's \"latency_cold\" taken out: the model before it had that figure, collective/tune/cold.go). Target: mean/predicted within 0.85-1.15. 'round (WAN)': the round whose run the row is (the one with the lowest mean; runs are picked by their time, not their probe) and the WAN bandwidth its probe measured, in MB/s (and, where the run logged it, the figures it came from: the lone measuring pair's, the best spread pair's and the contended round's aggregate); 'every round': each round's mean/predicted, each over its own probe (its WAN figure in brackets), in round order."
  echo
  echo "| size | algorithm | ran | mean | fastest | median | first | predicted | mean/predicted | fastest/predicted | median/predicted | first/predicted | sim/predicted | round (WAN) | every round | probe took | cores (load) | CPU/call | no CPU term | mean/no CPU term | median/no CPU term | model CPU/call | no cold | mean/no cold |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for s in $SIZES; do
    for a in $ALGOS; do
      if skipped "$a" "$(bytes "$s")"; then continue; fi
      m=$(awk -v m="${BEST[$a.$s]:-}" 'BEGIN { if (m != "") print m * 1e-6 }')
      p=${PRED[$a.$s]:-} f=${FAST[$a.$s]:-} md=${MED[$a.$s]:-} f1=${FIRST[$a.$s]:-}
      echo "| $s | $a | ${RAN[$a.$s]:-?} | $(fmt_s "$m") | $(fmt_s "$f") | $(fmt_s "$md") | $(fmt_s "$f1") | $(fmt_s "$p") | $(fmt_r "$m" "$p") | $(fmt_r "$f" "$p") | $(fmt_r "$md" "$p") | $(fmt_r "$f1" "$p") | $(fmt_r "${SIM[$a.$s]:-}" "$p") | ${ROUND[$a.$s]:-?} ($(awk -v w="${WANBW[$a.$s]:-}" 'BEGIN { if (w == "") printf "?"; else printf "%.1f", w / 1e6 }')${WANFROM[$a.$s]:+: ${WANFROM[$a.$s]}}) | ${RATIOS[$a.$s]:-?} | ${TOOK[$a.$s]:-?} | ${CORES[$a.$s]:-?} (${LOADS[$a.$s]:-?}) | ${CPU[$a.$s]:-?} s | $(fmt_s "${PREDX[$a.$s]:-}") | $(fmt_r "$m" "${PREDX[$a.$s]:-}") | $(fmt_r "$md" "${PREDX[$a.$s]:-}") | ${MCPU[$a.$s]:-?} s | $(fmt_s "${PREDH[$a.$s]:-}") | $(fmt_r "$m" "${PREDH[$a.$s]:-}") |"
    done
  done
  if [[ " $ALGOS " == *" auto "* ]]; then
    echo
    echo "## Auto against the best forced algorithm"
    echo
    echo "Per size, the run of auto with the lowest mean: what it ran (rank 0's COLL lines), what \`gocoll topo --explain SIZE --topology THAT-RUN'S-FILE --chunk C\` chooses (the same figures, size and chunk the job priced), and its mean against the lowest mean of the forced algorithms run at that size ($(echo $ALGOS | sed 's/ *auto//')). Target: auto/best <= 1.10."
    echo
    echo "By median: each algorithm's lowest median call (rank 0's, over its rounds) against the lowest of the forced algorithms'; short jobs' means carry their slowest calls. Target as by mean."
    echo
    echo "| size | auto ran | explain chooses | auto mean | best forced | its mean | auto/best | auto median | best forced by median | its median | auto/best by median |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for s in $SIZES; do
      best="" bm="" mbest="" mbm=""
      for a in $ALGOS; do
        [[ $a == auto ]] && continue
        if [[ -n ${BEST[$a.$s]:-} ]] && { [[ -z $bm ]] || awk -v t="${BEST[$a.$s]}" -v b="$bm" 'BEGIN { exit !(t < b) }'; }; then best=$a bm=${BEST[$a.$s]}; fi
        if [[ -n ${MEDBEST[$a.$s]:-} ]] && { [[ -z $mbm ]] || awk -v t="${MEDBEST[$a.$s]}" -v b="$mbm" 'BEGIN { exit !(t < b) }'; }; then mbest=$a mbm=${MEDBEST[$a.$s]}; fi
      done
      am=${BEST[auto.$s]:-} amd=${MEDBEST[auto.$s]:-}
      echo "| $s | ${RAN[auto.$s]:-?} | ${CHOSE[auto.$s]:-?} | $(fmt_s "$(awk -v m="$am" 'BEGIN { if (m != "") print m * 1e-6 }')") | ${best:-?} | $(fmt_s "$(awk -v m="$bm" 'BEGIN { if (m != "") print m * 1e-6 }')") | $(fmt_r "$am" "$bm") | $(fmt_s "$amd") | ${mbest:-?} | $(fmt_s "$mbm") | $(fmt_r "$amd" "$mbm") |"
    done
  fi
  if [[ -n $DET_SIZE ]]; then
    echo
    echo "## Config.Deterministic in the lab"
    echo
    echo "$DET_SIZE AllReduce, the model's choice of algorithm, \`gocoll bench allreduce --sizes $(bytes "$DET_SIZE") -n 3 -w 1\`, with GOCOLL_DETERMINISTIC=0 and =1 interleaved, $DET_ROUNDS rounds; time in us (the slowest rank's mean, out of place):"
    echo
    echo "- default (ran ${DET_RAN[0]:-?}): ${DET_A[*]}"
    echo "- deterministic (ran ${DET_RAN[1]:-?}): ${DET_B[*]}"
    awk -v a="${DET_A[*]}" -v b="${DET_B[*]}" 'function med(s, n, v, i, j, t) { n = split(s, v, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }; return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
      BEGIN { ma = med(a); mb = med(b); if (ma > 0) printf "- median deterministic/default: %.3f (%.0f against %.0f us)\n", mb / ma, mb, ma }'
  fi
} >"$table"
cat "$table"
