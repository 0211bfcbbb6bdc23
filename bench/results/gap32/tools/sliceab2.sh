#!/usr/bin/env bash
# sliceab2.sh OUT ROUNDS US...: interleaved (order alternating per round) prio'd wan_trace runs whose processes inherit a slice of US µs (0: default)
out=$1 rounds=$2; shift 2
mkdir -p $out
cd /work/wt/gap32
for r in $(seq $rounds); do
  vs=("$@"); (( r % 2 == 0 )) && vs=($(printf '%s\n' "$@" | tac))
  for us in "${vs[@]}"; do
    l=$(cut -d' ' -f1-3 /proc/loadavg)
    setsid bash -c 'echo -20 >/proc/$$/autogroup; python3 /tmp/gap32tools/slice.py '$us' $$; exec nice -n -20 env LAB=gap32s OUT='$out/s$us' GOCOLL=/tmp/gap32-gocoll SIZE=${SIZE:-16777216} bash bench/wan_trace.sh' >$out/log.$r.$us 2>&1
    echo "round $r slice ${us}us load $l: $(grep '^mean of .* dir [12]:' $out/log.$r.$us | sed 's/mean of 6 timed calls, //;s/| rate.*//' | tr '\n' ' ')"
  done
done
