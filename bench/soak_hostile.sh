#!/usr/bin/env bash
# bench/soak_hostile.sh: a running 8-rank MetaRoCE job under hostile
# traffic (issue 16 item 4). gocoll bench allreduce runs checked (-c 1)
# over MetaRoCE with the job key (gocoll run makes one) for DURATION,
# while bench/hostile sprays random, truncated, replayed and forged
# datagrams at every port of the ranks' UDP range (GOCOLL_UDP_PORTS) and
# floods the store with TCP connections that send garbage, half a hello
# or nothing. Replayed and forged copies of the job's own datagrams need
# root (AF_PACKET capture on lo); without it the datagrams are random.
#
# Prints the rows measured, the wrong results over all rows (must be 0),
# whether any rank failed or crashed, the hostile traffic sent and every
# rank's peak RSS (VmHWM) just before the job is stopped. It exits 1 if a
# result was wrong, a rank failed, or a rank's peak RSS passed RSS_BOUND.
#
# RSS_BOUND (MiB, default 192) is the documented bound on a rank's memory
# in this job: the sum of the limits the transports document (MetaRoCE:
# 8 path readers of 16 x 64 KiB = 8 MiB, UnexpectedBytes 4 MiB for each
# of 7 peers = 28 MiB, eager copies 1 MiB, MsgWindow's records about
# 16.5k x 250 B = 4 MiB for each of 7 peers = 29 MiB; mrtransport's doc,
# Limits), the bench's buffers (send, receive and check of MAXBYTES 4 MiB,
# and the AllReduce's scratch: 16 MiB) and the Go runtime's own (about 10 MiB), about 92 MiB
# live, doubled because Go's collector lets the heap grow to twice what is
# live before it collects (GOGC=100).
#
#   bash bench/soak_hostile.sh                  # 60 s, 8 ranks
#   DURATION=20 NP=4 bash bench/soak_hostile.sh
set -euo pipefail
cd "$(dirname "$0")/.."

NP=${NP:-8}
DURATION=${DURATION:-60}
PORTS=${PORTS:-47000-47199}
RATE=${RATE:-20000}
MAXBYTES=${MAXBYTES:-4M}
FLOOD_STORE=${FLOOD_STORE:-1} # 0: no TCP connections at the store
KEEP=${KEEP:-}                # a directory to keep the job's output in

dir=$(mktemp -d)
run_pid=
cleanup() {
	[ -n "$run_pid" ] && kill -INT "$run_pid" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
go build -o "$dir/gocoll" ./cmd/gocoll
go build -o "$dir/hostile" ./bench/hostile

"$dir/gocoll" run -np "$NP" -x GOCOLL_TRANSPORT=metaroce -x GOCOLL_UDP_PORTS="$PORTS" -- \
	"$dir/gocoll" bench allreduce -b 8 -e "$MAXBYTES" -f 4 -c 1 -N 0 >"$dir/out" 2>&1 &
run_pid=$!

# The ranks and the store they talk to.
ranks=
for _ in $(seq 100); do
	ranks=$(pgrep -f "^$dir/gocoll bench allreduce" || true)
	[ "$(echo "$ranks" | grep -c .)" -ge "$NP" ] && break
	sleep 0.1
done
store=
for p in $ranks; do
	store=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^GOCOLL_STORE=//p' | head -1)
	[ -n "$store" ] && break
done
echo "ranks: $(echo $ranks | wc -w), store: ${store:-unknown}, UDP ports $PORTS"

[ "$FLOOD_STORE" = 1 ] || store=
"$dir/hostile" -ports "$PORTS" -tcp "$store" -for "${DURATION}s" -rate "$RATE" >"$dir/hostile.out" 2>&1 || true

alive=0
rss=()
for p in $ranks; do
	if hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$p/status" 2>/dev/null) && [ -n "$hwm" ]; then
		alive=$((alive + 1))
		rss+=("$((hwm / 1024))")
	fi
done
kill -INT "$run_pid" 2>/dev/null || true
wait "$run_pid" 2>/dev/null || true
run_pid=

cat "$dir/hostile.out"
[ -n "$KEEP" ] && cp "$dir/out" "$KEEP/soak_hostile.out"
# The summary; its exit status is the results' verdict (1: none measured,
# a wrong one, or a failure line).
results_ok=1
awk '
	$1 == "[rank" && NF == 15 && $3 ~ /^[0-9]+$/ { rows++; wrong += $11 + $15; if ($11 != 0 || $15 != 0) bad++ }
	/panic|fatal error|failed|rank [0-9]+ exited/ { failures++ ; if (failures <= 5) print "  " $0 }
	END { printf "rows measured: %d, wrong results: %d (rows with any: %d), failure lines: %d\n", rows, wrong, bad + 0, failures + 0
	      exit !(rows > 0 && wrong == 0 && failures == 0) }
' "$dir/out" || results_ok=0
echo "ranks alive at the end: $alive of $NP; peak RSS per rank (MiB): ${rss[*]}"
max=0
for r in "${rss[@]}"; do [ "$r" -gt "$max" ] && max=$r; done
RSS_BOUND=${RSS_BOUND:-192}
echo "largest peak RSS: $max MiB (bound $RSS_BOUND MiB)"
if [ "$results_ok" != 1 ] || [ "$alive" -ne "$NP" ] || [ "$max" -gt "$RSS_BOUND" ]; then
	echo "soak: FAILED (wrong results, a failed rank, or peak RSS above the bound)"
	exit 1
fi
echo "soak: ok"
