#!/usr/bin/env bash
# bench/jitterloss_sweep.sh: TestFigureJitterLoss's first row (5 % random
# loss, 0-4 ms per-packet jitter each way, no reordering; 8 paths 2 a link
# over 4 links of 200 Mbit/s, 2 ms one way, 20 ms queues, 4 x 4 MiB in
# flight) over many seeds, in virtual time: the goodput of seconds 1-8 as %
# of capacity per seed, then the mean, the minimum and the seeds under the
# test's 85 % floor. EXTRA_US moves the links' delay by that many µs (a
# timing change only: a fragile tail shows on other seeds). The harness is
# added to the package for the build only (go test -overlay), so the work
# tree is not touched; about 1.5 s of CPU a seed.
#
# Usage: bench/jitterloss_sweep.sh [FIRST LAST]   (default: 1 60)
#   env: EXTRA_US (default 0)
set -euo pipefail
cd "$(dirname "$0")/.."
FIRST=${1:-1}
LAST=${2:-60}
EXTRA_US=${EXTRA_US:-0}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cat >"$TMP/sweep_test.go" <<'GO'
package metaroce_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gocoll/gocoll/transport/metaroce"
	"github.com/gocoll/gocoll/transport/metaroce/simfabric"
)

func TestJitterLossSweep(t *testing.T) {
	first, _ := strconv.Atoi(os.Getenv("SWEEP_FIRST"))
	last, _ := strconv.Atoi(os.Getenv("SWEEP_LAST"))
	extra, _ := strconv.Atoi(os.Getenv("SWEEP_EXTRA_US"))
	for seed := int64(first); seed <= int64(last); seed++ {
		s := newSim(t, seed, 2, metaroce.Config{Paths: 8, MaxDatagram: 9000})
		s.labLinks(simfabric.LinkConfig{Rate: labRate, Delay: 2*time.Millisecond + time.Duration(extra)*time.Microsecond,
			Jitter: 4 * time.Millisecond, Loss: 0.05, QueueBytes: queueOf(labRate, shallowQueue)})
		ca, cb := s.connect(0, 1)
		t0 := s.fab.Now()
		startFlow(s, 0, 1, ca, cb, 4<<20, 4)
		s.runTo(t0 + time.Second)
		b0 := s.arrived(1, cb)
		s.runTo(t0 + 8*time.Second)
		g := float64(s.arrived(1, cb)-b0) / 7 / (4 * labRate)
		fmt.Printf("jitterloss seed %d +%dus %.1f\n", seed, extra, 100*g)
	}
}
GO
printf '{"Replace":{"%s":"%s"}}\n' "$(pwd)/transport/metaroce/zz_jitterloss_sweep_test.go" "$TMP/sweep_test.go" >"$TMP/overlay.json"
go test -overlay "$TMP/overlay.json" -c -o "$TMP/mr.test" ./transport/metaroce
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) load $(cut -d' ' -f1-3 /proc/loadavg) seeds $FIRST-$LAST +${EXTRA_US}us"
(cd transport/metaroce && SWEEP_FIRST=$FIRST SWEEP_LAST=$LAST SWEEP_EXTRA_US=$EXTRA_US "$TMP/mr.test" -test.run '^TestJitterLossSweep$') |
	grep '^jitterloss' | tee "$TMP/out" 
awk '{n++; s+=$5; if (n==1 || $5<m) m=$5; if ($5<85) b=b" "$3"("$5")"} END {printf "# n=%d mean %.2f%% min %.1f%% under 85%%:%s\n", n, s/n, m, (b==""?" none":b)}' "$TMP/out"
