#!/bin/bash
export GOCACHE=/tmp/ci28/cache-v; rm -rf $GOCACHE
cd /work/wt/ci28
P="./transport/... ./collective/..."
/usr/bin/time -f "A vet %e %U %S" go vet $P 2>&1 | tail -1; cat /proc/loadavg
/usr/bin/time -f "C1 test-vet=off %e %U %S" go test -vet=off -count=1 -run '^$' $P 2>&1 | tail -1; cat /proc/loadavg
/usr/bin/time -f "B test+vet %e %U %S" go test -count=1 -run '^$' $P 2>&1 | tail -1; cat /proc/loadavg
/usr/bin/time -f "C2 test-vet=off %e %U %S" go test -vet=off -count=1 -run '^$' $P 2>&1 | tail -1; cat /proc/loadavg
