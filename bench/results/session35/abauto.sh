#!/bin/bash
# ab.sh ROUNDS "name:binary:ENV=V ..." ... : interleaved lab runs, 16M and 64M hierarchical, rank 0's row
set -u
G0=/tmp/p34/gocoll
R=$1; shift
cd /tmp/p34
$G0 lab down --name p34ab >/dev/null 2>&1 || true
$G0 lab up --name p34ab --hosts-per-site 2 --paths 4 --rate ${RATE:-200} --delay 2 --mtu 9000 >/dev/null
$G0 lab hostfile --name p34ab --slots 2 > hostsab
for r in $(seq 1 $R); do
  for v in "$@"; do
    name=${v%%:*}; rest=${v#*:}; bin=${rest%%:*}; envs=${rest#*:}
    X=(); for kv in $envs; do X+=(-x "$kv"); done
    out=$($bin run --hostfile hostsab --rsh 'ip netns exec {host}' --timeout 300s "${X[@]}" -- \
      $bin bench allreduce --sizes ${SIZES:-16777216,67108864} -n ${ITERS:-8} -w 2 --algo auto 2>&1)
    echo "$out" | awk -v n=$name -v r=$r -v l="$(cut -d' ' -f1 /proc/loadavg)" '$1=="[rank" && $2=="0]" && $3+0>1000000 { printf "%s round %d load %s size %d oop %.1f%% ip %.1f%%\n", n, r, l, $3, 100*$3/($8*1e-6)/1e8, 100*$3/($12*1e-6)/1e8 }'
  done
done
$G0 lab down --name p34ab >/dev/null 2>&1 || true
