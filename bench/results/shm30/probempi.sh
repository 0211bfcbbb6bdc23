#!/bin/bash
# probempi.sh: xcore probe, then one round of ab.sh MPI=1 at SIZE (mpi-shm-thp -m 64 MiB -s 20; main; board64)
# ./pvm/memb.test: `go test -c -o memb.test` of xcore/*.txt (renamed back to .go) in ./pvm
s=${1:-262144}
x=$(setsid bash -c 'echo -20 >/proc/$$/autogroup; exec nice -n -20 "$@"' x ./pvm/memb.test -test.bench 'Xcore' -test.count 1 -test.benchtime 20000x 2>&1 | awk '/Bench/{printf "%s ", $3}')
r=$(MPI=1 bash /work/wt/a2a30/bench/results/shm30/ab.sh $s 2000 1 "main /tmp/a2a30/gocoll-main" "b64s /tmp/a2a30/gocoll-b64s" | awk '{printf "%s %s ", $1, $4}')
echo "$(date +%T) load=$(cut -d' ' -f1 /proc/loadavg) xcore_ns=$x $r"
