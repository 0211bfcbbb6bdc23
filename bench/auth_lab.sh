#!/usr/bin/env bash
# bench/auth_lab.sh: issue 16's target in the lab, what MetaRoCE's
# authentication costs, with and without it in one run. Needs root (network
# namespaces), iproute2 and iptables.
#
# Usage: bench/auth_lab.sh
#   env: LAB (lab name, default t16auth), OUT (default bench/results/auth_lab),
#        REPS (rounds of every mode, default 3), MODES (default "none header
#        full encrypt"), LABS (default "shaped unshaped"), P2P_N (timed 64 MiB
#        messages, default 16 shaped, 64 unshaped), AR_N (timed 64 MiB AllReduces, default 5),
#        REV (the code's commit for the table, default git's HEAD here: set
#        it when running a copy)
#
# gocoll run always gives a job a key (GOCOLL_INSECURE=1 is refused with a
# store off loopback), so there is no "without" under it; bench/authlab
# builds its MetaRoCE world itself from flags, the key on its stdin. Each
# lab is 2 sites x 2 hosts, 4 paths between the sites, MTU 9000:
#   shaped    4 x 200 Mbit/s, 2 ms one way (the issue's lab): the links
#             may bound every mode equally, so the CPU time is printed too
#   unshaped  no rate limit and no delay: the CPU (and so the cost of each
#             mode) bounds the goodput
# In each lab, REPS rounds of every mode, interleaved (none header full
# encrypt, none header ...): p2p, rank 0 on s1h1 sends 64 MiB messages to
# rank 1 on s2h1 (8 paths, ports 7000-7007: the same links in every run of
# a lab); allreduce, 4 ranks (s1h1 s1h2 s2h1 s2h2) run float32 AllReduce sum
# of 64 MiB over the collective layer. The table gives the median of the
# rounds, the range, and the ratio of medians to none's; cpu is the
# processes' user+system time per GB received (p2p, both ranks) or per
# AllReduce call (all ranks). OUT/raw/ keeps every run's output, the links
# the p2p paths hash onto and the lab's counters; OUT/table.md the table.
set -euo pipefail
cd "$(dirname "$0")/.."

LAB=${LAB:-t16auth}
OUT=${OUT:-bench/results/auth_lab}
REPS=${REPS:-3}
MODES=${MODES:-none header full encrypt}
LABS=${LABS:-shaped unshaped}
AR_N=${AR_N:-5}
REV=${REV:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' + uncommitted changes')}
[[ $(id -u) -eq 0 ]] || { echo "bench/auth_lab.sh: needs root (network namespaces)" >&2; exit 2; }

BIN=$(mktemp -d)
chmod 755 "$BIN"
G=$BIN/gocoll A=$BIN/authlab
cleanup() { "$G" lab down --name "$LAB" >/dev/null 2>&1 || true; rm -rf "$BIN"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
go build -o "$G" ./cmd/gocoll
go build -o "$A" ./bench/authlab
mkdir -p "$OUT/raw"
stamp=$(date -u +%Y%m%d-%H%M%S)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# The job key: 32 random bytes in hex, given to every rank on stdin (printf
# is a builtin: the key is on no process's command line).
KEY=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')

declare -A PN=([shaped]=${P2P_N:-16} [unshaped]=${P2P_N:-64})
declare -A UP=(
  [shaped]="--paths 4 --rate 200 --delay 2 --mtu 9000"
  [unshaped]="--paths 4 --mtu 9000"
)
P2P_HOSTS=(s1h1 s2h1)
AR_HOSTS=(s1h1 s1h2 s2h1 s2h2)
# addr HOST: the lab's address of host sShH, 10.S.0.(10+H).
addr() { local h=$1; echo "10.${h:1:1}.0.$((10 + ${h:3}))"; }
peers() { local h out=; for h in "$@"; do out+=${out:+,}$(addr "$h"):7000; done; echo "$out"; }

# world RAW TEST MODE HOSTS...: one authlab per host, rank i on the i-th;
# every rank's output goes to RAW (the printing rank's line among it). Lower
# ranks dial higher ones, so the ranks start from the highest, each once the
# one above it says it listens (bounded: 60 s, or that rank's end).
world() {
  local raw=$1 test=$2 mode=$3; shift 3
  local hosts=("$@") ps n=${PN[$lab]} r pids=() failed=0 p t
  [[ $test == allreduce ]] && n=$AR_N
  ps=$(peers "${hosts[@]}")
  for ((r = ${#hosts[@]} - 1; r >= 0; r--)); do
    : >"$raw.$r"
    printf '%s\n' "$KEY" | "$G" lab exec --name "$LAB" "${hosts[r]}" -- "$A" -rank "$r" -peers "$ps" -mode "$mode" \
      -test "$test" -size 64M -n "$n" -timeout 180s >"$raw.$r" 2>&1 &
    pids[r]=$!
    for ((t = 0; t < 600; t++)); do
      grep -q "^authlab: rank $r: listening" "$raw.$r" && break
      kill -0 "${pids[r]}" 2>/dev/null || break
      sleep 0.1
    done
  done
  for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
  for ((r = 0; r < ${#hosts[@]}; r++)); do cat "$raw.$r"; rm -f "$raw.$r"; done >"$raw"
  [[ $failed -eq 0 ]] || echo "# run failed: $failed ranks" >>"$raw"
}

# field RAW NAME: NAME's value in RAW's authlab line ("" if none).
field() { sed -n "s/^authlab .* $2=\([^ ]*\).*/\1/p" "$1" | tail -1; }

declare -A V # V[lab,test,mode,metric] = the rounds' values, space-separated
for lab in $LABS; do
  # shellcheck disable=SC2086
  "$G" lab up --name "$LAB" --hosts-per-site 2 ${UP[$lab]} >/dev/null
  links=$OUT/raw/$stamp.$lab.links.txt
  for i in 0 1 2 3 4 5 6 7; do
    echo "path $i: $("$G" lab route --name "$LAB" s1h1 s2h1 $((7000 + i)) $((7000 + i)) udp 2>&1 | tail -1)"
  done >"$links"
  for rep in $(seq 1 "$REPS"); do
    for mode in $MODES; do
      for test in p2p allreduce; do
        raw=$OUT/raw/$stamp.$lab.$test.$mode.$rep.txt
        if [[ $test == p2p ]]; then world "$raw" p2p "$mode" "${P2P_HOSTS[@]}"; else world "$raw" allreduce "$mode" "${AR_HOSTS[@]}"; fi
        if [[ $test == p2p ]]; then m=goodput_mbit c=cpu_s_per_gb; else m=busbw_gbs c=cpu_ms_per_op; fi
        v=$(field "$raw" $m) cpu=$(field "$raw" $c) wrong=$(field "$raw" wrong)
        if grep -q '^# run failed' "$raw" || [[ -z $v || $wrong != 0 ]]; then v=failed; fi
        V[$lab,$test,$mode,bw]+="$v " V[$lab,$test,$mode,cpu]+="${cpu:-failed} "
        echo "bench/auth_lab.sh: $lab round $rep $test $mode: $m=$v $c=${cpu:-?} wrong=${wrong:-?}" >&2
      done
    done
  done
  { echo "# lab counters after every run of $lab"; "$G" lab stats --name "$LAB"; } >"$OUT/raw/$stamp.$lab.stats.txt"
  "$G" lab down --name "$LAB" >/dev/null
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# median VALUES...: the median, or "failed" if any round failed.
median() { printf '%s\n' "$@" | sort -g | awk '$1 == "failed" { f = 1 } { v[NR] = $1 } END {
  if (f || NR == 0) print "failed"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
range() { printf '%s\n' "$@" | awk '$1 != "failed" { if (n == 0 || $1 < lo) lo = $1; if (n == 0 || $1 > hi) hi = $1; n++ }
  END { if (n) printf "%g-%g", lo, hi; else print "-" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "failed" || b == "failed" || b == 0) print "-"; else printf "%.3f", a / b }'; }

table=$OUT/table.md
{
  echo "# MetaRoCE authentication in the lab ($(date -u +%Y-%m-%dT%H:%MZ), commit $REV, $(nproc) cores, load average $load0 before, $load1 after)"
  echo
  echo "bench/auth_lab.sh: 2 sites x 2 hosts, 4 paths, MTU 9000; shaped: 4 x 200 Mbit/s, 2 ms one way; unshaped: no rate, no delay. $REPS rounds of every mode, interleaved (${MODES// /, }); median of the rounds [range]; ratio: median over none's. p2p: bench/authlab -test p2p, s1h1 to s2h1, ${PN[shaped]} (shaped) or ${PN[unshaped]} (unshaped) x 64 MiB (8 paths; links in raw/$stamp.*.links.txt), goodput Mbit/s, cpu s/GB for both processes. allreduce: bench/authlab -test allreduce, 4 ranks, $AR_N x 64 MiB float32 sum, busbw GB/s (nccl-tests' formula; the shaped WAN bounds it near 0.1), cpu ms per call for all ranks. Raw output: raw/$stamp.*."
  echo
  echo "| lab | mode | p2p goodput (Mbit/s) | ratio | cpu s/GB | allreduce busbw (GB/s) | ratio | cpu ms/call |"
  echo "|---|---|---|---|---|---|---|---|"
  for lab in $LABS; do
    # shellcheck disable=SC2086
    g0=$(median ${V[$lab,p2p,none,bw]:-failed}) b0=$(median ${V[$lab,allreduce,none,bw]:-failed})
    for mode in $MODES; do
      # shellcheck disable=SC2086
      g=$(median ${V[$lab,p2p,$mode,bw]}) b=$(median ${V[$lab,allreduce,$mode,bw]})
      # shellcheck disable=SC2086
      echo "| $lab | $mode | $g [$(range ${V[$lab,p2p,$mode,bw]})] | $(ratio "$g" "$g0") | $(median ${V[$lab,p2p,$mode,cpu]}) | $b [$(range ${V[$lab,allreduce,$mode,bw]})] | $(ratio "$b" "$b0") | $(median ${V[$lab,allreduce,$mode,cpu]}) |"
    done
  done
} >"$table"
cat "$table"
