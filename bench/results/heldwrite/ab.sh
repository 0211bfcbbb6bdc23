#!/bin/bash
# interleaved A/B of BenchmarkSendPath: base.test (main + the benchmark) vs new.test
cd /tmp/wgen20_ab
for r in $(seq 1 ${ROUNDS:-8}); do
  if (( r % 2 )); then order="base new"; else order="new base"; fi
  for v in $order; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    ./$v.test -test.run XXX -test.bench BenchmarkSendPath -test.benchtime ${BT:-30x} -test.count 1 2>&1 | grep ^Benchmark | sed "s/^/$v round=$r load=$load /"
  done
done
