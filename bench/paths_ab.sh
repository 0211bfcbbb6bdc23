#!/usr/bin/env bash
# bench/paths_ab.sh: MetaRoCE's paths per rank (GOCOLL_PATHS) side by side
# in issue 14's two-site lab, interleaved round by round: for each round and
# each value, bench/hier_lab.sh (the job's busbw against the hierarchical
# WAN bound) and then bench/cpu_lab.sh (the job's CPU per call, the delay
# daemons', and one connection's CPU per MB). Needs root, as they do.
#
# Usage: bench/paths_ab.sh
#   env: PATHS_AB (the GOCOLL_PATHS values, default "8 16"), ROUNDS (default
#        3), SIZES (hier_lab.sh's, default "16M 64M"), CPU_SIZES (cpu_lab.sh's,
#        default 16M), ALGOS (default auto), LAB (name prefix, at most 11
#        lowercase letters or digits, default paths; the labs are LABh and
#        LABc), OUT (default
#        bench/results/paths_ab: OUT/hier_P_R and OUT/cpu_P_R, each with its
#        table.md and raw/), GOCOLL (a gocoll binary; default: one build of
#        this tree for every run), REV (its commit for the tables).
#
# One binary for every run: only the variable differs. Under the load of a
# shared 2-core machine a run's busbw moves by half between rounds, so read
# the CPU figures (per call, per MB, per DATA datagram) rather than the
# busbw, and every round rather than one. It prints one line per run (the
# table rows) and leaves the tables in OUT. It is not run by the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
PATHS_AB=${PATHS_AB:-8 16} ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-16M 64M} CPU_SIZES=${CPU_SIZES:-16M} ALGOS=${ALGOS:-auto}
LAB=${LAB:-paths} OUT=${OUT:-bench/results/paths_ab}
REV=${REV:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if [[ -z ${GOCOLL:-} ]]; then
  go build -o "$TMP/gocoll" ./cmd/gocoll
  GOCOLL=$TMP/gocoll
fi
export GOCOLL REV
mkdir -p "$OUT"
for ((r = 1; r <= ROUNDS; r++)); do
  for p in $PATHS_AB; do
    echo "# round $r GOCOLL_PATHS=$p hier_lab $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    LAB=${LAB}h SIZES=$SIZES ALGOS=$ALGOS XENV="GOCOLL_PATHS=$p" OUT=$OUT/hier_${p}_$r \
      bash bench/hier_lab.sh >"$OUT/hier_${p}_$r.log" 2>&1 || echo "# failed: see $OUT/hier_${p}_$r.log"
    grep -E '^\| [0-9]+M ' "$OUT/hier_${p}_$r/table.md" 2>/dev/null || true
  done
  for p in $PATHS_AB; do
    echo "# round $r GOCOLL_PATHS=$p cpu_lab $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    LAB=${LAB}c SIZES=$CPU_SIZES ALGOS=$ALGOS SPIN=default XENV="GOCOLL_PATHS=$p" OUT=$OUT/cpu_${p}_$r \
      bash bench/cpu_lab.sh >"$OUT/cpu_${p}_$r.log" 2>&1 || echo "# failed: see $OUT/cpu_${p}_$r.log"
    grep -E '^\| [0-9]+M |^- (across|within|as a job)' "$OUT/cpu_${p}_$r/table.md" 2>/dev/null | cut -c1-200 || true
  done
done
