#!/usr/bin/env bash
# The main job across hosts, where the network is the bottleneck: two hosts
# of a gocoll lab (2 sites of one host, 2 paths of RATE Mbit/s between them,
# DELAY ms one way, MTU 9000), one rank each, train with gradient buckets of
# several sizes, in float32 and bfloat16, and one rank alone with no
# network, REPS (3) times. Prints each run's summary lines. Needs root (network namespaces).
#   LAB=ddplab RATE=100 DELAY=2 bash examples/allreduce/lab.sh
set -euo pipefail
LAB=${LAB:-ddplab}
RATE=${RATE:-100}
DELAY=${DELAY:-2}
ARGS=${ARGS:--samples 1024 -batch 64 -epochs 1 -check=false}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap '"$tmp/gocoll" lab down --name "$LAB" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/gocoll" ./cmd/gocoll
go build -o "$tmp/allreduce" ./examples/allreduce
"$tmp/gocoll" lab up --name "$LAB" --sites 2 --hosts-per-site 1 --paths 2 --rate "$RATE" --delay "$DELAY" --mtu 9000
"$tmp/gocoll" lab hostfile --name "$LAB" --slots 1 >"$tmp/hosts.txt"
echo "$(date -u +%FT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg), allreduce $ARGS"
REPS=${REPS:-3}
configs=("-bucket-kib 25600" "-bucket-kib 1024" "-bucket-kib 25600 -bf16" "-bucket-kib 1024 -bf16")
for rep in $(seq "$REPS"); do # the configurations interleaved, so a change of load hits all alike
  for cfg in "${configs[@]}"; do
    echo "== run $rep: 2 hosts, $cfg"
    # shellcheck disable=SC2086 # word splitting of the flags is wanted
    "$tmp/gocoll" run --hostfile "$tmp/hosts.txt" --rsh 'ip netns exec {host}' -- "$tmp/allreduce" $ARGS $cfg |
      grep -E 'time per step|communication|FAILED' || echo "(failed)"
  done
  echo "== run $rep: one rank, no network"
  # shellcheck disable=SC2086
  "$tmp/allreduce" -ranks 1 $ARGS | grep -E 'time per step'
done
