#!/bin/bash
# As run in session 23 (cpu23): lab cpu23a; /tmp/cpu23/floor.sports held the source ports cpu_lab.sh picks (40000,41009,42001,43004).
# Its fl.send/fl.recv lines divide both sides by the datagrams received; the figures quoted are udpfloor's own lines.
# floor.sh RATE [GOMAXPROCS]: udpfloor s1h1->s2h1 under perf stat
cd /tmp/cpu23
EV=task-clock,context-switches,syscalls:sys_enter_recvmmsg,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_futex
gm=${2:-}
ip netns exec cpu23a-s2h1 env ${gm:+GOMAXPROCS=$gm} perf stat -x, -e $EV -o fl.recv ./udpfloor -recv -listen 10.2.0.11:7000 -paths 4 -time 8s > fl.recv.out 2>&1 &
sleep 0.5
ip netns exec cpu23a-s1h1 env ${gm:+GOMAXPROCS=$gm} perf stat -x, -e $EV -o fl.send ./udpfloor -send -to 10.2.0.11:7000 -paths 4 -rate $1 -time 8s -sports $(cat floor.sports) > fl.send.out 2>&1
wait
cat fl.send.out fl.recv.out
n=$(grep -o 'recv datagrams=[0-9]*' fl.recv.out | cut -d= -f2)
for f in fl.send fl.recv; do awk -F, -v pk=$n -v f=$f '$1 ~ /^[0-9.]+$/ { v[$3]=$1 } END { printf "%s GOMAXPROCS=%s cpu_us/dg %.1f cs %.2f recvmmsg %.2f epoll %.2f futex %.2f\n", f, "'$gm'", v["task-clock"]*1000/pk, v["context-switches"]/pk, v["syscalls:sys_enter_recvmmsg"]/pk, v["syscalls:sys_enter_epoll_pwait"]/pk, v["syscalls:sys_enter_futex"]/pk }' $f; done
