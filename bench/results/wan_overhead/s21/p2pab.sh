#!/usr/bin/env bash
# p2pab.sh ROUNDS BIN_A BIN_B: WAN p2p under perf stat (-x GOMAXPROCS=1), interleaved; prints CPU-us a DATA datagram per rank.
R=$1; A=$2; B=$3
for ((r = ${R0:-1}; r <= R; r++)); do
  order="A B"; ((r % 2 == 0)) && order="B A"
  for t in $order; do
    bin=$A; [[ $t == B ]] && bin=$B
    d=/tmp/wancpu21/out/p2pab.$t.$r; rm -rf $d
    XENV="-x GOMAXPROCS=1" /tmp/wancpu21/p2pperf.sh $bin $d stat 8 >/dev/null 2>&1
    awk -v t=$t -v r=$r -v ld="$(head -1 $d/load | sed 's/.*load average: //') / $(tail -1 $d/load | sed 's/.*load average: //')" '
      FILENAME ~ /out$/ && /mrtransport: engine"/ { for (i=1;i<=NF;i++) { split($i, kv, "="); if (kv[1]=="datagramsWritten") w[++k]=kv[2] } }
      FILENAME ~ /out$/ && /# total:/ { for (i=1;i<=NF;i++) if ($i=="MiB") mib=$(i-1) }
      FILENAME ~ /stat/ { split($0, f, ","); if (f[3]=="task-clock") { c[FILENAME]=f[1]; tot+=f[1] } if (f[3]=="context-switches") cs+=f[1] }
      END { dg = (w[1] > w[2]) ? w[1] : w[2]; printf "round %d %s: %s MiB, %d DATA-ish datagrams, both ranks %.1f CPU-us each, ctx %.2f each, load %s\n", r, t, mib, dg, tot*1000/dg, cs/dg, ld }' $d/out $d/stat.*
  done
done
