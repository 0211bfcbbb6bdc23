#!/usr/bin/env bash
# foldall.sh DIR: perf script + fold for every run dir under DIR that has perf files and no .fold yet
for d in $1/*.short $1/*.long; do
  [[ -f $d.fold ]] && continue
  [[ $(wc -l < $d/load) -lt 2 ]] && continue
  for f in $d/perf.*[0-9]; do perf script -i $f -F period,ip,sym,dso > $f.txt 2>/dev/null; done
  python3 $(dirname "$0")/fold.py $d > $d.fold
  rm -f $d/perf.*.txt
done
