#!/usr/bin/env bash
# small-size A/B: the endpoint reader default (on at GOMAXPROCS 1) vs GOCOLL_MR_COALESCE=0, head binary
cd /tmp/q28e
O=/tmp/ab28s
for round in 1 2 3; do
  order="on off"; [ $round = 2 ] && order="off on"
  for m in $order; do
    X=; [ $m = off ] && X=GOCOLL_MR_COALESCE=0
    echo "== $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) round $round $m"
    LAB=ab28s$m RATE=200 WARMUP=5 ITERS=60 SIZES="8 64K" ALGOS="hierarchical ring tree" GOCOLL=/tmp/g28e REV=448d24e7 XENV=$X OUT=$O/${round}_$m bash bench/hier_lab.sh > $O/${round}_$m.txt 2>&1
  done
done
echo "== done $(date -u +%T)"
