#!/usr/bin/env bash
# cpu24 (session 24): bench/cpu_lab.sh ABBA, base (ecbd4e2, hash/crc32)
# against new (a75b6de, internal/crc32c's folding). Run from the repository
# root with the two gocoll binaries built at $BINS/gocoll-base and
# $BINS/gocoll-new; the tables go to $OUT/N.VARIANT/table.md. The second
# set ran the order new base base new (runs 5-8).
set -u
BINS=${BINS:-/tmp/cpu24} OUT=${OUT:-/tmp/cpu24/lab}
i=${FIRST:-0}
for v in ${ORDER:-base new new base}; do
  i=$((i+1))
  echo "# run $i $v $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  LAB=cpu24l SIZES=16M ALGOS=auto SPIN=default ITERS=8 GOCOLL=$BINS/gocoll-$v REV=$v OUT=$OUT/$i.$v bash bench/cpu_lab.sh >"$OUT/$i.$v.log" 2>&1
  echo "# done $i $v $(date -u +%H:%M:%S) rc $? load $(cut -d' ' -f1-3 /proc/loadavg)"
done
