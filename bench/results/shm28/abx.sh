#!/usr/bin/env bash
# abx.sh COLL SIZE N ROUNDS "ENV..."...: gocoll-x with env settings, interleaved, niced; plus mpi at 256K if MPI=1
coll=$1 size=$2 n=$3 rounds=$4; shift 4
for r in $(seq $rounds); do
  if [[ ${MPI:-0} == 1 ]]; then
    echo "mpi $(GLIBC_TUNABLES=glibc.malloc.hugetlb=1 setsid bash -c 'echo -20 >/proc/$$/autogroup; exec nice -n -20 "$@"' x mpirun --allow-run-as-root --oversubscribe -n 4 -x GLIBC_TUNABLES ${MPIB:-/tmp/a2a28/mpib256} -l m -m 67108864 -s ${MPIS:-100} -c $coll 2>&1 | awk -v s=$size '$2==s {print $4}')"
  fi
  for envs in "$@"; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    out=$(env $envs setsid bash -c 'echo -20 >/proc/$$/autogroup; exec nice -n -20 /usr/bin/time -f "# cpu %U %S" "$@"' x ${BIN:-/tmp/a2a28/gocoll-x} bench "$coll" -np 4 --sizes "$size" -w 50 -n "$n" -c 1 --format peers 2>&1)
    t=$(awk -v c="$coll" '$1==c {print $4}' <<<"$out")
    cpu=$(awk -v n="$n" '$1=="#" && $2=="cpu" {printf "%.2f", ($3+$4)/n*1e6}' <<<"$out")
    echo "[$envs] $size load=$load time_us=$t cpu_us=$cpu"
  done
done
