#!/usr/bin/env bash
# peers.sh - gocoll next to its peers, in one run: gocoll bench, OpenMPI over
# TCP (also with huge-page malloc, -thp: plain OpenMPI pays page faults on a
# temporary buffer per call at 64 MiB), OpenMPI over shared memory and Gloo
# (torch.distributed) run one after
# another on the same sizes and rank counts, through ../shared/peers/run_all.sh
# (whose OURS_CMD hook runs gocoll); then bench/plot prints one table of
# busbw per size with gocoll's ratio to each peer and draws busbw vs size.
#
# usage: bench/peers.sh [N ...]          rank counts, default "2 4"
# environment:
#   RUNS        repeats of every configuration (default 2; the best run counts)
#   OUT         where the results go (default bench/results)
#   PEERS_DIR   the peer harness (default ../shared/peers next to the repository)
#   TRANSPORT   gocoll's transport, the "gocoll" column (default auto: shared
#               memory, every rank being on this host)
#   ALSO        more gocoll transports, each a column "gocoll-T" (default
#               metaroce; "" for none)
#   SCALE       multiplies every timed iteration count (as run_all.sh's SCALE)
#   MAXBYTES    largest size (default 67108864, as run_all.sh)
#   NO_INSTALL  1: do not apt-get install the peers' packages (root needed otherwise)
#   GOCOLL      a gocoll binary to use instead of building ./cmd/gocoll
# It is not run by the tests (it takes minutes and installs packages).
#
# "peers.sh --ours N" is the OURS_CMD run_all.sh calls: gocoll bench at N
# ranks, sizes and warm-up/timed iterations exactly as mpi_coll_bench's.
set -u -o pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$BENCH_DIR/.." && pwd)"
SELF="$BENCH_DIR/peers.sh"
SCALE="${SCALE:-1}"
MAXBYTES="${MAXBYTES:-67108864}"
TRANSPORT="${TRANSPORT:-auto}"
ALSO="${ALSO-metaroce}"
LABEL="${LABEL:-gocoll}"
COLLS=allreduce,broadcast,alltoall

# iters_for BYTES: "WARMUP ITERS" as mpi_coll_bench's schedule(), scaled.
iters_for() {
  awk -v b="$1" -v s="$SCALE" 'BEGIN{
    if (b <= 1024) { w = 50; i = 1000 } else if (b <= 65536) { w = 20; i = 200 }
    else if (b <= 1048576) { w = 5; i = 50 } else if (b <= 16777216) { w = 2; i = 10 } else { w = 2; i = 5 }
    i = int(i * s + 0.5); if (i < 1) i = 1
    w = int(w * (s < 1 ? s : 1) + 0.5); if (w < 1) w = 1
    print w, i }'
}

# run_ours N: one gocoll bench per group of sizes that share a schedule.
run_ours() {
  local n=$1 group="" key="" size w i
  for size in 8 1024 65536 1048576 16777216 67108864; do
    [ "$size" -le "$MAXBYTES" ] || break
    read -r w i <<<"$(iters_for "$size")"
    if [ -n "$group" ] && [ "$w $i" != "$key" ]; then
      bench_group "$n" "$group" $key || return
      group=""
    fi
    group="${group:+$group,}$size"; key="$w $i"
  done
  [ -z "$group" ] || bench_group "$n" "$group" $key
}

bench_group() { # n sizes warmup iters
  "$GOCOLL" bench "$COLLS" -np "$1" --sizes "$2" -w "$3" -n "$4" -c 1 \
    --transport "$TRANSPORT" --format peers --label "$LABEL"
}

# merge_blocks: one table per run, as summarize.py expects (its "## cpu" line
# tags the block before it): the first header, every row, the last RSS line
# and one end line (all_correct=no if any group had a wrong value).
merge_blocks() {
  awk '/^## bench=/ { if (seen++) next }
       /^coll / { if (cols++) next }
       /^## end / { end = $0; if ($0 ~ /all_correct=no/) bad = 1; next }
       /^# Peak RSS/ { rss = $0; next }
       { print }
       END { if (rss != "") print rss
             if (end != "") { if (bad) sub(/all_correct=yes/, "all_correct=no", end); print end } }'
}

if [ "${1:-}" = --ours ]; then
  : "${GOCOLL:?--ours needs GOCOLL, the gocoll binary}"
  run_ours "$2" | merge_blocks
  exit
fi

PEERS_DIR="${PEERS_DIR:-$REPO/../shared/peers}"
OUT="${OUT:-$BENCH_DIR/results}"
[ -x "$PEERS_DIR/run_all.sh" ] || { echo "peers.sh: no run_all.sh in $PEERS_DIR (set PEERS_DIR)"; exit 2; }
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

if [ -z "${GOCOLL:-}" ]; then
  GOCOLL="$WORK/gocoll"
  (cd "$REPO" && go build -o "$GOCOLL" ./cmd/gocoll) || { echo "peers.sh: building ./cmd/gocoll failed (or set GOCOLL)"; exit 1; }
fi
"$GOCOLL" bench -h >/dev/null 2>&1 || { echo "peers.sh: $GOCOLL has no bench subcommand"; exit 1; }
export GOCOLL SCALE MAXBYTES TRANSPORT

RAW="$OUT/raw-$(date +%Y%m%d-%H%M%S).txt"
targets=build,ours,mpi-tcp,mpi-tcp-thp,mpi-shm,gloo
[ "${NO_INSTALL:-0}" = 1 ] || targets="install,$targets"
echo "peers.sh: $targets for n=${*:-2 4}, raw output in $RAW"
OURS_CMD="'$SELF' --ours {n}" OURS_LABEL=gocoll RAW="$RAW" RUNS="${RUNS:-2}" \
  BUILD_DIR="$WORK/build" RESULTS_DIR="$OUT" SCALE="$SCALE" MAXBYTES="$MAXBYTES" \
  "$PEERS_DIR/run_all.sh" "$targets" "$@"
labels=gocoll
for t in $ALSO; do # each further transport as its own "ours" column
  OURS_CMD="TRANSPORT=$t LABEL=gocoll-$t '$SELF' --ours {n}" OURS_LABEL="gocoll-$t" RAW="$RAW" RUNS="${RUNS:-2}" \
    BUILD_DIR="$WORK/build" RESULTS_DIR="$OUT" SCALE="$SCALE" MAXBYTES="$MAXBYTES" NO_INSTALL=1 \
    "$PEERS_DIR/run_all.sh" ours "$@"
  labels="$labels,gocoll-$t"
done
labels="$labels,mpi-tcp,mpi-tcp-thp,mpi-shm,gloo"

(cd "$REPO" && go run ./bench/plot -ours gocoll -labels "$labels" \
  -md "$OUT/table.md" -png "$OUT/busbw.png" "$RAW") || exit 1
for t in $ALSO; do # the same table with that transport's ratios
  others=$(tr , '\n' <<<"$labels" | grep -vx "gocoll-$t" | paste -sd,)
  (cd "$REPO" && go run ./bench/plot -ours "gocoll-$t" -labels "gocoll-$t,$others" \
    -md "$OUT/table-$t.md" "$RAW") || exit 1
done
echo
cat "$OUT/table.md"
echo "peers.sh: table $OUT/table.md (and table-T.md for each of: $ALSO), plot $OUT/busbw.png, raw $RAW"
