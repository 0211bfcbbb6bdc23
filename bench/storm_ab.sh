#!/bin/bash
# bench/storm_ab.sh: interleaved A/B of bench/rss.sh's MetaRoCE storm between two commits.
# 8 ranks on this host; ranks 1-7 each send COUNT x SIZE bytes to rank 0, which posts no
# receive for HOLD. One line per run: commit, exit code, seconds, and the sums over every
# rank's "gocoll: path" lines of resent / lost / timeouts, the PeerTimeout lines, the load.
#   A=2d05bcd B=main PAIRS=5 bash bench/storm_ab.sh
set -u
A=${A:-main~1} B=${B:-main} PAIRS=${PAIRS:-3}
COUNT=${COUNT:-4000} SIZE=${SIZE:-16384} HOLD=${HOLD:-3s} TIMEOUT=${TIMEOUT:-300}
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d /tmp/storm_ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
for v in A B; do
	c=${!v}
	mkdir -p "$work/$v/src"
	git -C "$repo" archive "$c" | tar -x -C "$work/$v/src"
	(cd "$work/$v/src" && go build -o "$work/$v/gocoll" ./cmd/gocoll && go build -o "$work/$v/rssprobe" ./bench/rssprobe) || exit 1
done
sum() { grep 'msg="gocoll: path"' "$2" | grep -o "$1=[0-9]*" | cut -d= -f2 | paste -sd+ | bc; }
for i in $(seq 1 "$PAIRS"); do
	for v in A B; do
		load=$(cut -d' ' -f1 /proc/loadavg)
		log="$work/run_$v$i.log"
		start=$(date +%s.%N)
		(cd "$work" && timeout "$TIMEOUT" "./$v/gocoll" run -np 8 -x GOCOLL_TRANSPORT=metaroce \
			-x GOCOLL_STALL_TIMEOUT=10m -x GOCOLL_DEBUG=info -- "./$v/rssprobe" -mode storm \
			-size "$SIZE" -count "$COUNT" -hold "$HOLD" -window 1) >"$log" 2>&1
		rc=$?
		secs=$(echo "$(date +%s.%N) - $start" | bc)
		echo "$v=${!v} rc=$rc secs=$secs resent=$(sum resent "$log") lost=$(sum lost "$log")" \
			"timeouts=$(sum timeouts "$log") peerTimeoutLines=$(grep -c PeerTimeout "$log") load=$load"
	done
done
