#!/usr/bin/env bash
# bench/hier_ab.sh: two commits' hierarchical AllReduce in the two-site lab
# of bench/hier_lab.sh, interleaved, so that both see the same load.
#
# Usage: bench/hier_ab.sh OLD NEW      (commits; needs root, as hier_lab.sh)
#   env: LAB (default h14ab), ROUNDS (default 3), SIZES (bytes, default
#        "16777216,67108864"), ITERS (default 5), ALGO (default
#        hierarchical), PEER_TIMEOUT (GOCOLL_PEER_TIMEOUT, default unset)
#
# Each commit is built from `git archive` (so uncommitted work in the tree
# does not count). Each round runs OLD then NEW (`gocoll bench allreduce
# --algo ALGO` under `gocoll run --rsh 'ip netns exec {host}'`); the end
# prints, per size and binary, the times of rank 0's row (the slowest
# rank's, us) out-of-place and in-place, each round's and the median, with
# the load average before each run. The lab is torn down on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -eq 2 ]] || { echo "usage: bench/hier_ab.sh OLD NEW" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "bench/hier_ab.sh: needs root (network namespaces)" >&2; exit 2; }
LAB=${LAB:-h14ab} ROUNDS=${ROUNDS:-3} SIZES=${SIZES:-16777216,67108864} ITERS=${ITERS:-5}
ALGO=${ALGO:-hierarchical} PEER_TIMEOUT=${PEER_TIMEOUT:-}
TMP=$(mktemp -d)
chmod 755 "$TMP"
cleanup() { "$TMP/new" lab down --name "$LAB" >/dev/null 2>&1 || true; rm -rf "$TMP"; }
trap cleanup EXIT
for v in old new; do
  rev=$1
  [[ $v == new ]] && rev=$2
  mkdir "$TMP/src-$v"
  git archive "$rev" | tar -x -C "$TMP/src-$v"
  (cd "$TMP/src-$v" && go build -o "$TMP/$v" ./cmd/gocoll)
done
G=$TMP/new
"$G" lab down --name "$LAB" >/dev/null 2>&1 || true
"$G" lab up --name "$LAB" --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
"$G" lab hostfile --name "$LAB" --slots 2 >"$TMP/hosts"
for round in $(seq "$ROUNDS"); do
  for v in old new; do
    B=$TMP/$v
    echo "# round $round $v ($([[ $v == old ]] && echo "$1" || echo "$2")): load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%T)"
    "$B" run --hostfile "$TMP/hosts" --rsh 'ip netns exec {host}' --timeout 600s \
      ${PEER_TIMEOUT:+-x GOCOLL_PEER_TIMEOUT=$PEER_TIMEOUT} -- \
      "$B" bench allreduce --sizes "$SIZES" -n "$ITERS" -w 1 --algo "$ALGO" >"$TMP/out.$round.$v" 2>&1 ||
      echo "# round $round $v failed: $(grep -m1 -i failed "$TMP/out.$round.$v" || true)"
    awk -v v=$v '$1 == "[rank" && $2 == "0]" && $3 ~ /^[0-9]+$/ && NF >= 14 { print v, $3, $8, $12 }' "$TMP/out.$round.$v" >>"$TMP/rows"
  done
done
echo "# size binary: out-of-place us per round (median) | in-place us per round (median)"
for s in ${SIZES//,/ }; do
  for v in old new; do
    awk -v s="$s" -v v="$v" '
      function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
      $1 == v && $2 == s { n++; o[n] = $3; p[n] = $4; lo = lo " " $3; li = li " " $4 }
      END { if (n) printf "%s %s:%s (%d) |%s (%d)\n", s, v, lo, median(o, n), li, median(p, n); else printf "%s %s: no rows\n", s, v }' "$TMP/rows"
  done
done
