#!/usr/bin/env bash
# envab2.sh OUT ROUNDS VARIANT...: interleaved (order alternating) prio'd wan_trace runs per XENV variant ("-" = none)
out=$1 rounds=$2; shift 2
mkdir -p $out
cd /work/wt/gap32
for r in $(seq $rounds); do
  vs=("$@"); (( r % 2 == 0 )) && vs=($(printf '%s\n' "$@" | tac))
  for v in "${vs[@]}"; do
    x=$v; [[ $x == - ]] && x=
    tag=$(echo "$v" | tr -c 'A-Za-z0-9\n' _)
    l=$(cut -d' ' -f1-3 /proc/loadavg)
    XENV="$x" setsid bash -c 'echo -20 >/proc/$$/autogroup; exec nice -n -20 env LAB=gap32e OUT='$out/$tag' GOCOLL=${GOCOLL:-/tmp/gap32-gocoll} SIZE=${SIZE:-16777216} bash bench/wan_trace.sh' >$out/log.$r.$tag 2>&1
    echo "round $r [$v] load $l: $(grep '^mean of .* dir [12]:' $out/log.$r.$tag | sed 's/mean of 6 timed calls, //;s/| rate.*//' | tr '\n' ' ')"
  done
done
