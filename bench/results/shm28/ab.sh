#!/usr/bin/env bash
# ab.sh COLL SIZE N ROUNDS BIN...: interleaved, each run niced -20 in its own autogroup; prints label, load, time/call, cpu us/call (whole job / N)
coll=$1 size=$2 n=$3 rounds=$4; shift 4
for r in $(seq $rounds); do
  for b in "$@"; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    out=$(setsid bash -c 'echo -20 >/proc/$$/autogroup; exec nice -n -20 /usr/bin/time -f "# cpu %U %S" "$@"' x "$b" bench "$coll" -np 4 --sizes "$size" -w 50 -n "$n" -c 1 --format peers 2>&1)
    t=$(awk -v c="$coll" '$1==c {print $4}' <<<"$out")
    cpu=$(awk -v n="$n" '$1=="#" && $2=="cpu" {printf "%.2f", ($3+$4)/n*1e6}' <<<"$out")
    echo "$(basename $b) $size load=$load time_us=$t cpu_us=$cpu"
  done
done
