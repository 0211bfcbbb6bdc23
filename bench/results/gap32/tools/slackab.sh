#!/usr/bin/env bash
# slackab.sh OUT ROUNDS SLACK...: interleaved (order alternating) prio'd wan_trace runs with the lab's GOCOLL_DELAYD_SLACK_US
out=$1 rounds=$2; shift 2
mkdir -p $out
cd /work/wt/gap32
for r in $(seq $rounds); do
  vs=("$@"); (( r % 2 == 0 )) && vs=($(printf '%s\n' "$@" | tac))
  for v in "${vs[@]}"; do
    l=$(cut -d' ' -f1-3 /proc/loadavg)
    setsid bash -c 'echo -20 >/proc/$$/autogroup; exec nice -n -20 env PERF=${PERF:-0} GOCOLL_DELAYD_SLACK_US='$v' LAB=gap32d OUT='$out/k$v' GOCOLL=/tmp/gap32-gocoll SIZE=${SIZE:-16777216} bash bench/wan_trace.sh' >$out/log.$r.$v 2>&1
    echo "round $r slack $v load $l: $(grep '^mean of .* dir [12]:' $out/log.$r.$v | sed 's/mean of 6 timed calls, //;s/| rate.*//' | tr '\n' ' ') | $(grep -o 'late [0-9]*, max [0-9.]*' $out/log.$r.$v | awk '{m = ($4 > m) ? $4 : m} END {print "worst late " m " ms"}')"
  done
done
