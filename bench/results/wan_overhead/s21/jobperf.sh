#!/usr/bin/env bash
# jobperf.sh BIN OUTDIR [iters]: 16 MiB hierarchical allreduce in the two-site lab, each rank under perf record.
set -euo pipefail
B=$1; O=$2; IT=${3:-8}
LAB=${LAB:-wancpu21j}
mkdir -p $O
D=$(mktemp -d); chmod 755 $D; cp $B $D/gocoll; G=$D/gocoll
$G lab down --name $LAB >/dev/null 2>&1 || true
$G lab up --name $LAB --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
$G lab hostfile --name $LAB --slots 2 > $D/hosts
wrap=${WRAP:-"perf record -F 1000 -g -o $O/perf.\$\$.data"}
uptime > $O/load
$G run --hostfile $D/hosts --rsh 'ip netns exec {host}' --timeout 300s -x GOCOLL_DEBUG=info -x GOCOLL_DEBUG_SUBSYS=COLL,NET ${XENV:-} -- \
  sh -c "exec $wrap $G bench allreduce --sizes 16777216 -n $IT -w 1 --algo hierarchical" > $O/out 2>&1 || echo "# run failed $?" >> $O/out
uptime >> $O/load
$G lab down --name $LAB >/dev/null
rm -rf $D
