#!/bin/bash
# probe.sh: the placement probe (xcore, 64 KiB handover cpu0->cpu1: ~4 us close, ~15 far), then ab.sh with the args
x=$(setsid bash -c 'echo -20 >/proc/$$/autogroup; exec nice -n -20 "$@"' x /tmp/a2a31/pvm/memb.test -test.bench 'Xcore$|XcoreNT' -test.count 1 -test.benchtime 20000x 2>&1 | awk '/Bench/{printf "%s ", $3}')
echo "# $(date +%T) load=$(cut -d' ' -f1 /proc/loadavg) xcore_ns,xcoreNT_ns=$x"
bash /tmp/a2a31/ab.sh "$@"
