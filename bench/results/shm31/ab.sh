#!/usr/bin/env bash
# ab.sh SIZE N ROUNDS "LABEL BIN ENV..."...: alltoall, interleaved, niced -20 in own autogroup; MPI=1 adds mpi-shm-thp (-s MPIS)
size=$1 n=$2 rounds=$3; shift 3
for r in $(seq $rounds); do
  if [[ ${MPI:-0} == 1 ]]; then
    echo "mpi $size load=$(cut -d' ' -f1 /proc/loadavg) time_us=$(GLIBC_TUNABLES=glibc.malloc.hugetlb=1 setsid bash -c 'echo -20 >/proc/$$/autogroup; exec nice -n -20 "$@"' x mpirun --allow-run-as-root --oversubscribe -n 4 -x GLIBC_TUNABLES ${MPIB:-/tmp/a2a29/mpib} -l m -m ${MPIM:-67108864} -s ${MPIS:-20} -c alltoall 2>&1 | awk -v s=$size '$2==s {print $4}')"
  fi
  for spec in "$@"; do
    read -r label bin envs <<<"$spec"
    load=$(cut -d' ' -f1 /proc/loadavg)
    out=$(env $envs setsid bash -c 'echo -20 >/proc/$$/autogroup; exec nice -n -20 /usr/bin/time -f "# cpu %U %S" "$@"' x "$bin" bench alltoall -np ${NP:-4} --sizes "$size" -w 50 -n "$n" -c 1 --format peers $EXTRA 2>&1)
    t=$(awk '$1=="alltoall" {print $4}' <<<"$out")
    cpu=$(awk -v n="$n" '$1=="#" && $2=="cpu" {printf "%.1f", ($3+$4)/n*1e6}' <<<"$out")
    echo "$label $size load=$load time_us=$t cpu_us=$cpu"
  done
done
