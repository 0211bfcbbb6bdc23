#!/usr/bin/env bash
# bench/shm_ab.sh: gocoll commits next to OpenMPI's shared memory with
# huge-page malloc (../shared/peers' mpi-shm-thp) on this host, interleaved
# round by round so that every binary sees the same load, and the median of
# the rounds per size (issue 17's targets are ratios to mpi-shm-thp, and 4
# ranks on 2 cores move single runs several-fold).
#
# Usage: bench/shm_ab.sh REV...        (commits, e.g. HEAD~1 HEAD)
#   env: ROUNDS (default 3), NP (ranks, default 4), COLLS (default
#        broadcast,alltoall; any of allreduce,broadcast,alltoall),
#        SIZES (bytes, default "65536 1048576 16777216"; warm-up and timed
#        iterations as mpi_coll_bench's schedule), SCALE (default 1: the
#        timed iterations of both sides times SCALE, as mpi_coll_bench's
#        -s, which gets it too: its 10 timed calls at 16 MiB and 50 at
#        1 MiB last 30 and 10 ms, within a start-up that moves either side
#        by tens of percent on this host), BIND (default none; core: both
#        sides bind rank i to core i mod the host's cores, OpenMPI with
#        --bind-to core:overload-allowed, gocoll under gocoll run
#        --bind-to core --oversubscribe: unbound, 4 ranks on 2 cores
#        sometimes settle 3 on one core and 1 on the other for a whole
#        run), NICE (default 0: the
#        niceness every run gets, e.g. -20 as root on a loaded host; with
#        the kernel's autogroups on, as here, each run also gets a session
#        of its own whose group has that niceness, since niceness alone
#        only ranks the tasks of one session against each other),
#        PEERS_DIR (default ../shared/peers next to the repository; from
#        a git worktree, next to the main working tree), SWEEP (default 0:
#        a gocoll job of its own for each size; 1: one gocoll job a round
#        runs every collective over every size, SIZES and mpi_coll_bench's
#        8 1024 65536 1048576 16777216 67108864 up to the largest, in
#        mpi_coll_bench's order and schedule (gocoll bench
#        --peers-schedule SCALE; commits from before that option cannot run
#        this way), so that each size is measured after the same calls on
#        both sides, as mpi_coll_bench measures every size in one job),
#        SETTLE (default empty: not passed; e.g. 20ms: gocoll bench
#        --settle SETTLE, each rank spinning that long before its first
#        measurement, past the Go runtime monitor's first looks after the
#        ranks' idle set-up; a diagnosis, OpenMPI gets nothing alike;
#        commits from before that option cannot run with it),
#        FRESH (default 0; 1: gocoll bench --fresh, each call's send data
#        changed on every page, as new tensors are, where the peer resends
#        the same bytes, which it does not exploit; commits from before
#        that option cannot run with it).
#
# Both sides time alike: warm-up calls, a barrier, the timed loop on each
# rank's own clock, its mean per call, the slowest rank's (max over
# ranks); neither reads the clock in the loop (gocoll's progress lines
# read it ever more rarely while calls are short). What differs is how
# far a root can run ahead of its receivers: OpenMPI's shared-memory
# eager sends (per-peer fast boxes, then fragments from free lists of
# thousands) let it run far ahead, gocoll's board Broadcast at most
# Config.BoardRing (256) calls, so in a short loop OpenMPI's ranks can run
# much of it alone while gocoll's take turns on the 2 cores every lap of
# the ring, and a loop's fixed costs (the first calls after the barrier)
# weigh more: a longer loop (SCALE=100) compares the rate of a sustained
# loop of Broadcasts (bench/results/small_ops.md, Session 16, bcast8).
#
# Each commit is built from `git archive` (uncommitted work does not
# count); mpi_coll_bench is compiled from PEERS_DIR (needs mpicc:
# libopenmpi-dev), from a copy whose size table is the union of its own
# (8 B, 1 KiB, 64 KiB, 1 MiB, 16 MiB, 64 MiB) and SIZES when SIZES has
# others (bench/peers_build.sh; e.g. SIZES=8192 measures 8 KiB on both
# sides, and with SWEEP=1 both jobs run it between 1 and 64 KiB). A round
# runs mpi-shm-thp, then each commit's `gocoll bench --format peers` (the
# slowest rank's mean per call). The end prints one line per collective,
# size and label (an AllToAll's size as both sides print it, e.g. 16 for
# SIZES' 8 at 4 ranks): median time_us, its ratio to mpi-shm-thp's
# median, and every round's figure; the load average before each round is
# printed as it starts. It is not run by the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 ]] || { echo "usage: bench/shm_ab.sh REV..." >&2; exit 2; }
ROUNDS=${ROUNDS:-3} NP=${NP:-4} COLLS=${COLLS:-broadcast,alltoall}
SIZES=${SIZES:-65536 1048576 16777216} NICE=${NICE:-0} SCALE=${SCALE:-1} BIND=${BIND:-none} SWEEP=${SWEEP:-0}
SETTLE=${SETTLE:-}
settle=()
[[ -n $SETTLE ]] && settle=(--settle "$SETTLE")
[[ ${FRESH:-0} == 1 ]] && settle+=(--fresh)
case $SWEEP in 0 | 1) ;; *) echo "shm_ab.sh: SWEEP is 0 or 1, not $SWEEP" >&2; exit 2 ;; esac
case $BIND in
  none) mpibind=() gocollrun=() ;;
  core) mpibind=(--bind-to core:overload-allowed) gocollrun=(run -np "$NP" --bind-to core --oversubscribe) ;;
  *) echo "shm_ab.sh: BIND is none or core, not $BIND" >&2; exit 2 ;;
esac
PEERS_DIR=${PEERS_DIR:-$(dirname "$(git rev-parse --path-format=absolute --git-common-dir)")/../shared/peers}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# shellcheck source=bench/peers_build.sh
. bench/peers_build.sh
# shellcheck disable=SC2086 # SIZES is a list
build_mpi_coll_bench "$TMP/mpi_coll_bench" "$PEERS_DIR" $SIZES
# shellcheck source=bench/build_revs.sh
. bench/build_revs.sh
build_revs "$TMP" "$@"
max=0
for s in $SIZES; do ((s > max)) && max=$s; done
# a2asizes: SIZES as both sides print an AllToAll's: whole floats, at
# least one per rank, rounded up to a multiple of NP (8 B at 4 ranks is
# 16 B), so that a size below that is paired too.
a2asizes=$(for s in $SIZES; do echo $(((s / 4 + NP - 1) / NP * NP * 4)); done | paste -sd' ' -)
# niced CMD...: CMD at niceness NICE, in a session of its own whose
# autogroup has it too when NICE is not 0 and autogroups are on.
niced() {
  if [[ $NICE != 0 && $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null) == 1 ]]; then
    setsid bash -c 'n=$1; shift; echo "$n" >/proc/$$/autogroup && exec nice -n "$n" "$@"' niced "$NICE" "$@"
  else
    nice -n "$NICE" "$@"
  fi
}
# iters BYTES: "WARMUP ITERS" as mpi_coll_bench's schedule at -s SCALE
# (iterations times SCALE, rounded, at least 1; warm-ups times SCALE only
# below 1).
iters() {
  local w i
  if (($1 <= 1024)); then w=50 i=1000; elif (($1 <= 65536)); then w=20 i=200
  elif (($1 <= 1048576)); then w=5 i=50; elif (($1 <= 16777216)); then w=2 i=10; else w=2 i=5; fi
  awk -v w="$w" -v i="$i" -v s="$SCALE" 'BEGIN {
    i = int(i * s + 0.5); if (i < 1) i = 1
    w = int(w * (s < 1 ? s : 1) + 0.5); if (w < 1) w = 1
    print w, i }'
}
rows=$TMP/rows
for round in $(seq "$ROUNDS"); do
  echo "# round $round: load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%T), bind $BIND, scale $SCALE, sweep $SWEEP"
  GLIBC_TUNABLES=glibc.malloc.hugetlb=1 niced mpirun --allow-run-as-root --oversubscribe "${mpibind[@]}" \
    -n "$NP" -x GLIBC_TUNABLES "$TMP/mpi_coll_bench" -l mpi-shm-thp -m "$max" -s "$SCALE" -c "$COLLS" 2>&1 |
    awk -v sizes=" $SIZES " -v a2a=" $a2asizes " '/^(allreduce|broadcast|alltoall) / && index($1 == "alltoall" ? a2a : sizes, " " $2 " ") { print "mpi-shm-thp", $1, $2, $4 }' >>"$rows"
  for l in "${labels[@]}"; do
    jobs=$SIZES
    if ((SWEEP)); then
      all=$(for s in $SIZES 8 1024 65536 1048576 16777216 67108864; do if ((s <= max)); then echo "$s"; fi; done | sort -nu | paste -sd, -)
      jobs=sweep
    fi
    for s in $jobs; do
      if [[ $s == sweep ]]; then loops=(--sizes "$all" --peers-schedule "$SCALE")
      else read -r w i <<<"$(iters "$s")"; loops=(--sizes "$s" -w "$w" -n "$i"); fi
      # Under gocoll run (BIND=core) the launcher starts the ranks and
      # prefixes rank 0's lines with "[rank 0] ".
      if ((${#gocollrun[@]})); then launch=("$TMP/gocoll-$l" "${gocollrun[@]}" "$TMP/gocoll-$l") np=()
      else launch=("$TMP/gocoll-$l") np=(-np "$NP"); fi
      niced "${launch[@]}" bench "$COLLS" "${np[@]}" "${loops[@]}" "${settle[@]}" -c 1 --format peers 2>&1 |
        sed 's/^\[rank 0\] //' |
        awk -v l="$l" -v sizes=" $SIZES " -v a2a=" $a2asizes " '/^(allreduce|broadcast|alltoall) / && index($1 == "alltoall" ? a2a : sizes, " " $2 " ") { print l, $1, $2, $4; next }
                       / all_correct=no/ { print "# " l ": WRONG VALUES" > "/dev/stderr" }' >>"$rows"
    done
  done
done
echo "# coll size label median_us ratio_to_mpi-shm-thp rounds..."
awk '
  { k = $2 " " $3 " " $1; v[k] = v[k] " " $4 }
  END {
    for (k in v) {
      n = split(substr(v[k], 2), x, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
      med[k] = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2 # as hier_ab.sh and auth_lab.sh
    }
    for (k in v) {
      split(k, f, " "); m = f[1] " " f[2] " mpi-shm-thp"
      r = (m in med && med[m] > 0) ? sprintf("%.2f", med[k] / med[m]) : "-"
      printf "%-9s %9s %-12s %10.1f %6s  %s\n", f[1], f[2], f[3], med[k], r, v[k]
    }
  }' "$rows" | sort -k1,1 -k2,2n -k3,3
