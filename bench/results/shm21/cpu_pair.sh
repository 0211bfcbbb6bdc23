#!/bin/bash
# cpu_pair.sh BIN... (session 21, bcast21): perf stat of a Broadcast loop
# of SIZE bytes (default 64 KiB), NS then NL timed calls, per binary ("mpi":
# /tmp/bcast21/mcb64, mpi_coll_bench with its size table cut to 64 KiB, -s
# N/200), ROUNDS times interleaved; prints per call of the difference
# (long minus short): task-clock (us of CPU, all processes), context
# switches, page faults, and the long run's figure line.
set -u
NS=${NS:-200} NL=${NL:-5200} ROUNDS=${ROUNDS:-3} SIZE=${SIZE:-65536}
for r in $(seq $ROUNDS); do
  for b in "$@"; do
    for n in $NS $NL; do
      if [[ $b == mpi ]]; then
        s=$(awk -v n=$n 'BEGIN{print n/200}')
        GLIBC_TUNABLES=glibc.malloc.hugetlb=1 perf stat -x, -e task-clock,context-switches,page-faults -o /tmp/bcast21/ps.$n.txt \
          mpirun --allow-run-as-root --oversubscribe -n 4 -x GLIBC_TUNABLES /tmp/bcast21/mcb64 -l mpi -m $SIZE -s $s -c broadcast > /tmp/bcast21/out.$n.txt 2>&1
      else
        perf stat -x, -e task-clock,context-switches,page-faults -o /tmp/bcast21/ps.$n.txt \
          $b bench broadcast -np 4 --sizes $SIZE -w 20 -n $n -c 0 --format peers > /tmp/bcast21/out.$n.txt 2>&1
      fi
    done
    awk -F, -v b=$(basename $b) -v ns=$NS -v nl=$NL -v ld="$(cut -d' ' -f1 /proc/loadavg)" '
      FNR==1{f++} /task-clock/{t[f]=$1} /context-switches/{c[f]=$1} /page-faults/{p[f]=$1}
      END{d=nl-ns; printf "%-14s cpu/call %.2f us  cs/call %.2f  pf/call %.3f  load %s\n", b, (t[2]-t[1])*1000/d, (c[2]-c[1])/d, (p[2]-p[1])/d, ld}' /tmp/bcast21/ps.$NS.txt /tmp/bcast21/ps.$NL.txt
    grep -h "^broadcast" /tmp/bcast21/out.$NL.txt | tail -1
  done
done
