#!/usr/bin/env bash
# envab.sh OUTDIR ROUNDS VARIANT... : interleaved wan_trace runs per XENV variant ("-" = none)
out=$1 rounds=$2; shift 2
cd /work/wt/gap32
for r in $(seq $rounds); do
  i=0
  for v in "$@"; do
    i=$((i+1))
    x=$v; [[ $x == - ]] && x=
    l=$(cut -d' ' -f1 /proc/loadavg)
    LAB=gap32e XENV="$x" OUT=$out/v$i GOCOLL=/tmp/gap32-gocoll nice -n -20 bash bench/wan_trace.sh >$out/log.$r.$i 2>&1
    echo "round $r v$i [$v] load $l: $(grep '^mean of .* dir [12]:' $out/log.$r.$i | sed 's/mean of 6 timed calls, //' | tr '\n' ' ')"
  done
done
