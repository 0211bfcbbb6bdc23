#!/usr/bin/env bash
# small sizes: new (farStream) default vs head default vs off
cd /tmp/q28e
O=/tmp/ab28s/r2
mkdir -p $O
for round in 1 2; do
  for m in new old off; do
    X=; G=/tmp/g28e; [ $m = off ] && X=GOCOLL_MR_COALESCE=0; [ $m = new ] && G=/tmp/g28n
    echo "== $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) round $round $m"
    LAB=ab28t$m RATE=200 WARMUP=5 ITERS=60 SIZES="8 64K" ALGOS="hierarchical ring tree" GOCOLL=$G REV=$m XENV=$X OUT=$O/${round}_$m bash bench/hier_lab.sh > $O/${round}_$m.txt 2>&1
  done
done
for round in 1 2; do
  for m in new old; do
    G=/tmp/g28e; [ $m = new ] && G=/tmp/g28n
    echo "== $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) big round $round $m"
    LAB=ab28b$m RATE=200 WARMUP=5 ITERS=20 SIZES="16M 64M" ALGOS=auto GOCOLL=$G REV=$m OUT=$O/big_${round}_$m bash bench/hier_lab.sh > $O/big_${round}_$m.txt 2>&1
  done
done
echo "== done $(date -u +%T)"
