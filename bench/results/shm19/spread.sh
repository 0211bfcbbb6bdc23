#!/usr/bin/env bash
# spread.sh COLL SIZES: one round of session 19's barrier-exit measurement (shm_large.md, Session 19).
# OpenMPI (mpi_coll_bench with mpi_trace.patch, every size up to the largest in one job, as the peers
# run) and a gocoll built with trace.patch (--sizes SIZES --peers-schedule 1, one job), each in a NICE=-20
# autogroup session; per size: the spread of the ranks' exits from the Barrier before the timed loop
# (latest minus earliest, CLOCK_MONOTONIC / CLOCK_REALTIME, us), the largest first timed call (us;
# the instrument reads nothing else between the Barrier and the timed loop) and the figure.
#   build once: git archive 724264b | tar -x -C /tmp/t && (cd /tmp/t && patch -p1 <.../trace.patch &&
#     go build -o /tmp/gocoll-trace ./cmd/gocoll); cp /work/shared/peers/mpi_coll_bench.c /tmp/m.c &&
#     patch /tmp/m.c <.../mpi_trace.patch && mpicc -O2 -o /tmp/mpi-trace /tmp/m.c
#   then: GOBIN=/tmp/gocoll-trace MPIBIN=/tmp/mpi-trace bash spread.sh broadcast 8,1024,65536
set -euo pipefail
c=$1 sz=$2 max=${2##*,}
niced() { setsid -w bash -c 'echo -20 >/proc/$$/autogroup && exec nice -n -20 "$@"' niced "$@"; }
echo "# load $(cut -d' ' -f1 /proc/loadavg) $(date -u +%T)"
TRACE_CALLS=1 GLIBC_TUNABLES=glibc.malloc.hugetlb=1 niced mpirun --allow-run-as-root --oversubscribe -n 4 \
  -x GLIBC_TUNABLES -x TRACE_CALLS "$MPIBIN" -l m -m "$max" -c "$c" 2>&1 |
  awk '/^MABS/{s=$3; e=$5; if(!(s in mn)||e<mn[s])mn[s]=e; if(e>mx[s])mx[s]=e; if($7>c1[s])c1[s]=$7} /^'"$c"' /{f[$2]=$4}
    END{for(s in mn) printf "mpi    %-9s %8d spread %6.0f call1max %7.1f fig %s\n", "'"$c"'", s, (mx[s]-mn[s])/1e3, c1[s], f[s]}' | sort -k3n
TRACE_CALLS=1 niced "$GOBIN" bench "$c" -np 4 --sizes "$sz" --peers-schedule 1 -c 1 --format peers 2>&1 | sed 's/^\[rank [0-9]\] //' |
  awk 'BEGIN{n=split("'"$sz"'",z,","); for(i=1;i<=n;i++) sz[i-1]=z[i]}
    /^TRACE rank .* calls:/{s=$5; split($7,a,":"); if(a[2]>c1[s])c1[s]=a[2]}
    /^ABS/{k++; e=$7; s=sz[int((k-1)/4)]; if(!(s in mn)||e<mn[s])mn[s]=e; if(e>mx[s])mx[s]=e}
    /^'"$c"' /{f[$2]=$4}
    END{for(s in mn) printf "gocoll %-9s %8d spread %6.0f call1max %7.1f fig %s\n", "'"$c"'", s, (mx[s]-mn[s])/1e3, c1[s], f[s]}' | sort -k3n
