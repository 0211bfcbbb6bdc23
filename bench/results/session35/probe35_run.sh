#!/bin/bash
# run.sh ROUNDS name:bin ... : lab jobs that dump their probed topology
set -u
G0=/tmp/p34/gocoll
R=$1; shift
cd /tmp/probe35
$G0 lab down --name p35pr >/dev/null 2>&1 || true
$G0 lab up --name p35pr --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
$G0 lab hostfile --name p35pr --slots 2 > hosts
for r in $(seq 1 $R); do
  for v in "$@"; do
    name=${v%%:*}; bin=${v#*:}
    $bin run --hostfile hosts --rsh 'ip netns exec {host}' --timeout 120s -x GOCOLL_TOPO_DUMP=/tmp/probe35/$name.$r.json -- \
      $bin bench allreduce --sizes 8 -n 2 -w 1 >/dev/null 2>&1
    python3 -c "
import json
d=json.load(open('/tmp/probe35/$name.$r.json'))
print('$name', $r, ' '.join('%s %.2f/%.2f ns/B msg %s' % (k, l['cpu_per_byte']*1e9, l.get('cpu_per_byte_busy',0)*1e9, l.get('cpu_per_message')) for k,l in d['levels'].items()))
"
  done
done
$G0 lab down --name p35pr >/dev/null 2>&1 || true
