#!/usr/bin/env bash
# bench/rss.sh: peak resident memory per rank under load on rank 0, for
# each transport (issue 15 item 4). Eight ranks on this host under
# gocoll run, bench/rssprobe in two modes:
#
#   incast  ranks 1-7 each send COUNT messages of SIZE bytes to rank 0,
#           which keeps WINDOW receives posted per sender: a sustained
#           7-to-1 incast
#   storm   ranks 1-7 each post STORM_COUNT sends of STORM_SIZE bytes to
#           rank 0 at once, and rank 0 posts no receive for HOLD: every
#           message is one nobody has received yet; then it takes them all
#
# Prints one table row per transport and mode: rank 0's and the senders'
# largest peak RSS (getrusage), before the load and at the end, the time,
# and the bytes rank 0's own receive buffers hold (part of its RSS).
#
#   bash bench/rss.sh                 # shm, tcp, metaroce
#   TRANSPORTS=tcp bash bench/rss.sh
#   EXTRA_ENV="GOCOLL_PEER_TIMEOUT=30s" bash bench/rss.sh
set -euo pipefail
cd "$(dirname "$0")/.."

TRANSPORTS=${TRANSPORTS:-"shm tcp metaroce"}
NP=${NP:-8}
SIZE=${SIZE:-1048576}
COUNT=${COUNT:-2048}
WINDOW=${WINDOW:-4}
STORM_SIZE=${STORM_SIZE:-16384}
STORM_COUNT=${STORM_COUNT:-4000} # at most collective.MaxRunningOps (4096)
HOLD=${HOLD:-3s}
TIMEOUT=${TIMEOUT:-300}
EXTRA_ENV=${EXTRA_ENV:-}

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/gocoll" ./cmd/gocoll
go build -o "$dir/rssprobe" ./bench/rssprobe

envs=(-x GOCOLL_STALL_TIMEOUT=10m) # a storm's thousands of pending sends are no stall
for e in $EXTRA_ENV; do envs+=(-x "$e"); done

printf '| transport | mode | load | rank 0 peak RSS MiB (before) | senders max peak RSS MiB (before) | seconds | rank 0 buffers MiB | outcome |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for t in $TRANSPORTS; do
	for mode in incast storm; do
		if [ "$mode" = incast ]; then
			args=(-mode incast -size "$SIZE" -count "$COUNT" -window "$WINDOW")
			load="$((NP - 1))x$COUNT x $SIZE B, window $WINDOW"
			bufs=$(((NP - 1) * WINDOW * SIZE))
		else
			args=(-mode storm -size "$STORM_SIZE" -count "$STORM_COUNT" -hold "$HOLD" -window 1)
			load="$((NP - 1))x$STORM_COUNT x $STORM_SIZE B, held $HOLD"
			bufs=$(((NP - 1) * STORM_SIZE))
		fi
		out="$dir/$t.$mode"
		rc=0
		timeout "$TIMEOUT" "$dir/gocoll" run -np "$NP" -x GOCOLL_TRANSPORT="$t" "${envs[@]}" -- \
			"$dir/rssprobe" "${args[@]}" >"$out.stdout" 2>"$out.stderr" || rc=$?
		python3 - "$t" "$mode" "$load" "$bufs" "$rc" "$out.stdout" "$out.stderr" <<'EOF'
import json, sys
t, mode, load, bufs, rc, stdout, stderr = sys.argv[1:]
rows = [json.loads(l) for l in open(stdout) if l.startswith('{')]
r0 = [r for r in rows if r['rank'] == 0]
snd = [r for r in rows if r['rank'] != 0]
def cell(rs):
    if not rs:
        return '-'
    return '%.1f (%.1f)' % (max(r['peak_rss_mib'] for r in rs), max(r['peak_rss_mib_before'] for r in rs))
secs = '%.2f' % max(r['seconds'] for r in rows) if rows else '-'
if rc == '0':
    outcome = 'ok'
else:
    last = [l.strip() for l in open(stderr) if l.startswith('gocoll run:')]
    outcome = 'exit %s: %s' % (rc, (last[1] if len(last) > 1 else last[0] if last else '')[:160].replace('|', '/'))
print('| %s | %s | %s | %s | %s | %s | %.1f | %s |' % (t, mode, load, cell(r0), cell(snd), secs, int(bufs) / 2**20, outcome))
EOF
	done
done
