#!/usr/bin/env bash
# bench/ecmp_sim.sh: issue 13 item 3 on the simulated ECMP fabric. One
# MetaRoCE connection (rank 0 -> 1, 4 MiB messages) over 4 links of
# 100 Mbit/s, 2 ms one way, that its paths' ports hash onto (SimNet.ECMP,
# a seeded hash per connection), in virtual time (testing/synctest), for
# SEEDS seeds (default 100) per configuration: the share of connections
# using all 4 links at the start, in the 200 ms ending at 1 s and at 8 s,
# and the goodput of seconds 4-8 (mrtransport TestECMPSimTable). No root,
# no real network; each configuration takes about a minute of CPU.
#
# Usage: bench/ecmp_sim.sh [PATHS...]   (default: 8 16)
#   env: SEEDS (default 100), REPICK (on or off, default on), EARLY (on or
#        off: the early re-pick phase, default on), DELAY_MS (one way,
#        default 2; the queues hold at least a round trip), INFLIGHT (4 MiB
#        messages in flight, default 1; the lab's long-RTT rows keep 16),
#        SIM_SECONDS (virtual seconds per connection, default 8)
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${SEEDS:-100}
REPICK=${REPICK:-on}
EARLY=${EARLY:-on}
DELAY_MS=${DELAY_MS:-2}
INFLIGHT=${INFLIGHT:-1}
SIM_SECONDS=${SIM_SECONDS:-8}
BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT
go test -c -o "$BIN/mrt" ./transport/metaroce/mrtransport
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in "${@:-8 16}"; do
	for paths in $p; do
		ECMP_SIM_SEEDS=$SEEDS ECMP_SIM_PATHS=$paths ECMP_SIM_REPICK=$REPICK ECMP_SIM_EARLY=$EARLY ECMP_SIM_DELAY_MS=$DELAY_MS ECMP_SIM_INFLIGHT=$INFLIGHT ECMP_SIM_SECONDS=$SIM_SECONDS "$BIN/mrt" -test.run '^TestECMPSimTable$' | grep '^ecmp-sim'
	done
done
