#!/usr/bin/env bash
# Where an 8-byte AllReduce's time goes (board): CPU and context switches per call, and a profile.
# usage: small8.sh BIN OUTDIR
set -u
G=$1; O=$2; mkdir -p $O
for n in 2000 22000; do
  perf stat -x, -e task-clock,context-switches,raw_syscalls:sys_enter -o $O/stat.$n.txt $G bench allreduce -np 4 --sizes 8 -w 1000 -n $n -c 1 --format peers > $O/bench.$n.txt 2>&1
done
python3 - "$O" <<'PY'
import sys,csv
O=sys.argv[1]
def read(n):
    d={}
    for line in open(f"{O}/stat.{n}.txt"):
        p=line.strip().split(",")
        if len(p)>3 and p[0] and p[0][0].isdigit(): d[p[2]]=float(p[0])
    return d
a,b=read(2000),read(22000)
for k in b:
    v=(b[k]-a.get(k,0))/20000
    unit = "us" if k=="task-clock" else ""
    if k=="task-clock": v=v*1000  # msec -> us
    print(f"{k}: {v:.2f} {unit} per call (whole job, 4 ranks + launcher)")
PY
perf record -F 2000 -g -o $O/perf.data $G bench allreduce -np 4 --sizes 8 -w 1000 -n 20000 -c 1 --format peers > /dev/null 2>&1
perf report -i $O/perf.data --no-children --sort comm,dso,sym --stdio 2>/dev/null | grep -v "^$" | grep "%" | head -45 > $O/profile.txt
rm -f $O/perf.data
cat $O/profile.txt | head -30
