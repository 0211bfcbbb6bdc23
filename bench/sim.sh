#!/usr/bin/env bash
# bench/sim.sh: gocoll sim against the cost model (issue 14, item 5).
#
# Usage: bench/sim.sh            env: OUT (default bench/results/sim),
#                                     SKIP_1024=1 keeps OUT/raw/ranks-1024.txt
#
# 1. 256 simulated ranks (4 sites x 8 hosts x 8 ranks, the assumed link
#    figures of collective/tune.DefaultLinks): ring, tree and hierarchical
#    AllReduce at 8 B, 64 KiB, 4 MiB and 256 MiB (payload-free where ranks x
#    size > 256 MiB), each beside the model's prediction (target: within
#    15 %); the forced Broadcast and Reduce algorithms (chain, binomial,
#    tree: each ends with the confirm round the model prices) likewise.
#    Rings and trees run on the channels the model chooses (ring/C, tree/C).
# 2. Tree against ring and recursive doubling (and hierarchical) at 64
#    ranks (1 site x 8 hosts x 8 ranks) and 256 ranks (4 x 8 x 8), 8 B to
#    256 MiB, and the model's choice (auto) against the fastest.
# 3. 1024 ranks (4 sites x 32 hosts x 8 ranks, 5 ms WAN of 8 paths), every
#    algorithm at 64 MiB, payload-free: the wall time it takes here.
# OUT/raw/ keeps gocoll sim's outputs, OUT/table.md the tables
# (bench/simplot), OUT/sweep.png the sweeps. Virtual times do not depend on the machine; wall times do.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/sim}
mkdir -p "$OUT/raw"
BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT
go build -o "$BIN/gocoll" ./cmd/gocoll
G="$BIN/gocoll"

nice "$G" sim --sites 4 --hosts-per-site 8 --ranks-per-host 8 --algo ring,tree,hierarchical \
	allreduce 8 64K 4M 256M | tee "$OUT/raw/model-256.txt"
for coll in broadcast reduce; do
	nice "$G" sim --sites 4 --hosts-per-site 8 --ranks-per-host 8 --algo chain,binomial,tree \
		"$coll" 8 64K 4M 256M | tee "$OUT/raw/model-256-$coll.txt"
done
for shape in "1 8 8" "4 8 8"; do
	set -- $shape
	nice "$G" sim --sites "$1" --hosts-per-site "$2" --ranks-per-host "$3" \
		--algo tree,recursive-doubling,ring,hierarchical \
		allreduce 8 64 512 4K 32K 256K 2M 16M 128M 256M | tee "$OUT/raw/sweep-$(($1 * $2 * $3)).txt"
done
if [ "${SKIP_1024:-0}" = 0 ]; then
start=$(date +%s)
nice "$G" sim --sites 4 --hosts-per-site 32 --ranks-per-host 8 --wan-delay 5ms --wan-paths 8 \
	--algo all allreduce 64M | tee "$OUT/raw/ranks-1024.txt"
echo "# wall: $(($(date +%s) - start)) s for the 4 runs, $(nproc) cores" | tee -a "$OUT/raw/ranks-1024.txt"
fi

go run ./bench/simplot -md "$OUT/table.md" -png "$OUT/sweep.png" -model "$OUT/raw/model-256.txt" \
	-model "$OUT/raw/model-256-broadcast.txt" -model "$OUT/raw/model-256-reduce.txt" \
	"$OUT/raw/sweep-64.txt" "$OUT/raw/sweep-256.txt"
echo "wrote $OUT/table.md and $OUT/sweep.png"
