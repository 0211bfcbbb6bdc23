#!/bin/bash
# ab.sh BIN... (session 21, bcast21): a Broadcast of SIZE bytes (default
# 64 KiB) by gocoll binaries (or wrappers of them) built by hand, interleaved
# round by round with mpi_coll_bench (MPI=0: without), each run in a NICE
# -20 autogroup session as bench/shm_ab.sh runs them, W warm-ups and N timed
# calls (mpi_coll_bench -s N/200); prints each binary's median over ROUNDS
# and every round's figure. Needs gawk and /tmp/bcast21/mcb:
#   mpicc -O2 -o /tmp/bcast21/mcb /work/shared/peers/mpi_coll_bench.c
# bench/shm_ab.sh is the one to use on commits; this one took binaries
# with local switches (the experiments of shm_large.md, session 21).
set -u
ROUNDS=${ROUNDS:-5} SIZE=${SIZE:-65536} W=${W:-20} N=${N:-200} EXTRA=${EXTRA:-}
niced() { setsid bash -c 'echo -20 >/proc/$$/autogroup && exec nice -n -20 "$@"' niced "$@"; }
out=$(mktemp)
for r in $(seq $ROUNDS); do
  echo "# round $r load $(cut -d' ' -f1 /proc/loadavg) $(date -u +%T)" >&2
  if [[ ${MPI:-1} == 1 ]]; then
  s=$(awk -v n=$N 'BEGIN{print n/200}')
  GLIBC_TUNABLES=glibc.malloc.hugetlb=1 niced mpirun --allow-run-as-root --oversubscribe -n 4 -x GLIBC_TUNABLES /tmp/bcast21/mcb -l mpi -m $SIZE -s $s -c broadcast 2>&1 | awk -v sz=$SIZE '$1=="broadcast" && $2==sz {print "mpi", $4}' >> $out
  fi
  for b in "$@"; do
    niced $b bench broadcast -np 4 --sizes $SIZE -w $W -n $N -c 0 --format peers 2>&1 | awk -v l=$(basename $b) '$1=="broadcast"{print l, $4}' >> $out
  done
done
gawk '{v[$1]=v[$1]" "$2} END{for(k in v){n=split(substr(v[k],2),x," "); asort(x); m=(n%2)?x[(n+1)/2]:(x[n/2]+x[n/2+1])/2; printf "%-16s median %7.2f  rounds %s\n", k, m, v[k]}}' $out | sort
rm -f $out
