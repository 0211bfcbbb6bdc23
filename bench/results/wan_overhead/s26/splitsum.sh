#!/bin/bash
# per round and binary: the s1->s2 direction: lab bytes/pkts, DATA (up job rank 0), ACKs (down job rank 1)
cd /tmp/wire26
grep -E "^(old|new) round (3|4)" split_lab.log | while read b _ r _ load _ f0 p0 q0 d0 rb0 rp0 rq0 rd0 _ f1 p1 q1 d1 rb1 rp1 rq1 rd1; do
  for dir in up down; do
    if [ $dir = up ]; then lb=$((f1-f0)); lp=$((p1-p0)); lq=$((q1-q0)); ld=$((d1-d0)); ackjob=down; else lb=$((rb1-rb0)); lp=$((rp1-rp0)); lq=$((rq1-rq0)); ld=$((rd1-rd0)); ackjob=up; fi
    D=$(grep 'rank=0 datagramsWritten' split.$b.$r.$dir.txt | sed 's/.*bytesWritten=\([0-9]*\).* data=\([0-9]*\).*/\1 \2/')
    A=$(grep 'rank=1 datagramsWritten' split.$b.$r.$ackjob.txt | sed 's/.*bytesWritten=\([0-9]*\).*acksOnData=\([0-9]*\) acks=\([0-9]*\).*/\1 \3/')
    T=$(grep "# total" split.$b.$r.$dir.txt | sed 's/.*total: \([0-9.]*\) MiB in \([0-9.]*\) s.*; \([0-9.]*\) MiB sent on 8 paths, \([0-9]*\) packets.*/\1 \2 \3 \4/')
    set -- $D $A $T
    awk -v b=$b -v r=$r -v dir=$dir -v ld1=$load -v lb=$lb -v lp=$lp -v lq=$lq -v ld=$ld -v db=$1 -v dn=$2 -v ab=$3 -v an=$4 -v gm=$5 -v gs=$6 -v pm=$7 -v rs=$8 'BEGIN {
      printf "%s r%s %s (load %s): lab %.1f MB %d pkts (prio %d, tbf drops %d); DATA %d written %.1f MB (%.0f B avg); ACKs %d (%.3f a DATA, %.0f B avg); goodput %.1f MiB in %s s = %.1f %% of R; ACK bytes+frames %.2f %% of wire; DATA hdr+frame %.2f %%; resent %d\n",
        b, r, dir, ld1, lb/1e6, lp, lq, ld, dn, db/1e6, db/dn, an, an/dn, ab/an, gm, gs, 100*gm*1048576/gs/1e8, 100*(ab+42*an)/lb, 100*dn*(76+42)/lb, rs }'
  done
done
