#!/usr/bin/env bash
# bench/lab.sh: issue 13's evaluation on `gocoll lab`, one MetaRoCE connection
# against one TCP connection on the same emulated links, in the same run.
# Needs root (network namespaces), iproute2 and iptables.
#
# Usage: bench/lab.sh [ROW...]        (default: every row below)
#   env: LAB (lab name, default bl), LAB_UP_FLAGS (more flags of every `gocoll lab up`,
#        e.g. "--prio-dscp -1": the rate limiters one FIFO, no band for MetaRoCE's control class), TIME (seconds per run, default 8; rows
#        with a long RTT run twice as long), OUT (default bench/results/lab),
#        TRANSPORTS (default "metaroce tcp mptcp"; mptcp needs python3)
#
# Each row brings a lab up, runs `gocoll bench p2p` (rank 0 in s1h1 sends to
# rank 1 in s2h1) under `gocoll run --rsh 'ip netns exec {host}'` once per
# transport, and keeps the lab's counters. OUT/table.md gets one line per
# row; OUT/raw/ has every run's output and counters.
#
# mptcp is the kernel's MPTCP, driven by a small python3 sender and receiver
# (gocoll bench p2p --transport mptcp needs a store the launcher serves,
# which the root namespace cannot reach here): the receiver's host signals
# its address with 7 more ports (shared/recipes/slurm-mptcp.md part B3), so
# up to 8 subflows, which the routers hash onto the links by port.
#
# Rows tcp-share (a MetaRoCE connection and a TCP flow at once), incast (6
# p2p jobs into one host behind one 400 Mbit/s link) and allreduce (2 sites
# x 2 hosts x 2 ranks, ring and hierarchical, auto vs shm+tcp) come first,
# then the one-connection rows; PNG plots (bench/labplot) come last: for each
# scenario OUT/SCENARIO.goodput.png and, for MetaRoCE, OUT/SCENARIO.paths.png.
set -euo pipefail
cd "$(dirname "$0")/.."

LAB=${LAB:-bl}
TIME=${TIME:-8}
OUT=${OUT:-bench/results/lab}
TRANSPORTS=${TRANSPORTS:-metaroce tcp mptcp}

. bench/lab_common.sh
lab_setup lab.sh
go build -o "$G" ./cmd/gocoll
mkdir -p "$OUT/raw"
if [[ " $TRANSPORTS " == *" mptcp "* ]] && ! command -v python3 >/dev/null; then
  echo "bench/lab.sh: no python3: leaving mptcp out" >&2
  TRANSPORTS=${TRANSPORTS/mptcp/}
fi

# mptcp.py recv ADDR PORT | send ADDR PORT SECONDS: one MPTCP connection; the
# receiver prints goodput per second and in total, as gocoll bench p2p does.
cat >"$BIN/mptcp.py" <<'PY'
import os, socket, sys, time
# PROTO=tcp: plain TCP instead; SPORT: the sender's source port (its route).
MPTCP = getattr(socket, "IPPROTO_MPTCP", 262) if os.environ.get("PROTO", "mptcp") == "mptcp" else 0
mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "recv":
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM, MPTCP)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port)); ls.listen(1); ls.settimeout(30)
    c, _ = ls.accept(); c.settimeout(30)
    buf = bytearray(4 << 20); total = 0; start = None; last = 0; tick = 1.0; n_tick = 0
    while True:
        n = c.recv_into(buf)
        now = time.monotonic()
        if n == 0:
            break
        if start is None:
            start = now
            # The wall clock at the first byte, so that a row can take the
            # intervals that overlap another flow's run (tcp-share).
            print("[rank 0] # start epoch %.3f" % time.time(), flush=True)
        total += n; n_tick += n; last = now
        if now - start >= tick:
            print("[rank 0] %8.2f %16.1f" % (now - start, n_tick * 8 / 1e6), flush=True)
            tick += 1.0; n_tick = 0
    secs = max(last - (start or last), 1e-9)
    print("[rank 0] # total: %.1f MiB in %.2f s, goodput %.1f Mbit/s (kernel %s, python3)" % (total / 2**20, secs, total * 8 / secs / 1e6, "MPTCP" if MPTCP else "TCP"))
else:
    secs = float(sys.argv[4]); deadline = time.monotonic() + 10
    while True:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, MPTCP)
        try:
            if os.environ.get("SPORT"):
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("0.0.0.0", int(os.environ["SPORT"])))
            s.connect((addr, port)); break
        except OSError:
            s.close()
            if time.monotonic() > deadline: raise
            time.sleep(0.05)
    data = bytes(4 << 20); end = time.monotonic() + secs
    while time.monotonic() < end:
        s.sendall(data)
    s.close()
PY

# run_mptcp RAW SECONDS: one MPTCP connection from s1h1 to s2h1.
run_mptcp() {
  local raw=$1 secs=$2 h p
  for h in s1h1 s2h1; do "$G" lab exec --name "$LAB" "$h" -- ip mptcp limits set subflows 8 add_addr_accepted 8; done
  for p in 10100 10101 10102 10103 10104 10105 10106; do
    "$G" lab exec --name "$LAB" s2h1 -- ip mptcp endpoint add 10.2.0.11 port "$p" signal
  done
  "$G" lab exec --name "$LAB" s2h1 -- python3 "$BIN/mptcp.py" recv 10.2.0.11 7000 >"$raw" 2>&1 &
  local recv=$!
  "$G" lab exec --name "$LAB" s1h1 -- python3 "$BIN/mptcp.py" send 10.2.0.11 7000 "$secs" >>"$raw.send" 2>&1 ||
    echo "# run failed: sender $?" >>"$raw"
  wait "$recv" || echo "# run failed: receiver $?" >>"$raw"
  { echo "# subflow endpoints: 10.2.0.11 ports 7000 (initial), 10100-10106 (signalled)"; cat "$raw.send"; } >>"$raw"
  rm -f "$raw.send"
}

# Rows: name | capacity (Mbit/s) | target | time multiplier | lab up flags |
# set-up (shape:PATH:RATE,...) or mid-run command (midrun:ARGS of gocoll lab,
# at half time) | capacity after it | seconds it may take to settle.
ROWS=(
  "4x200-2ms|800|>= 90%|1|--paths 4 --rate 200 --delay 2 --mtu 9000|||"
  "4x200-0ms|800|>= 90%|1|--paths 4 --rate 200 --mtu 9000|||"
  "4x200-10ms|800|>= 90%|2|--paths 4 --rate 200 --delay 10 --mtu 9000|||"
  "4x200-25ms|800|>= 90%|2|--paths 4 --rate 200 --delay 25 --mtu 9000|||"
  "4x200-50ms|800|>= 90%|2|--paths 4 --rate 200 --delay 50 --mtu 9000|||"
  "4x200-2ms-mtu1500|800|>= 85%|1|--paths 4 --rate 200 --delay 2 --mtu 1500|||"
  "100-200-300-400|1000|>= 85%|1|--paths 4 --rate 200 --delay 2 --mtu 9000|shape:p1:100,p3:300,p4:400||"
  "4x200-2ms-loss1|800|>= 85%|1|--paths 4 --rate 200 --delay 2 --mtu 9000 --loss 1|||"
  "4x200-2ms-loss5|800|>= 65%|1|--paths 4 --rate 200 --delay 2 --mtu 9000 --loss 5|||"
  "cut-p1-silent|800|0 lost; >= 85% of the 600 left within 1 s|1|--paths 4 --rate 200 --delay 2 --mtu 9000|midrun:cut --silent p1|600|1"
  "p1-delay-2-to-20|800|>= 85% within 2 s|1|--paths 4 --rate 200 --delay 2 --mtu 9000|midrun:shape p1 --delay 20|800|2"
)

want=("$@")
selected() { [[ ${#want[@]} -eq 0 ]] && return 0; local w; for w in "${want[@]}"; do [[ $w == "$1" ]] && return 0; done; return 1; }

goodput() { sed -n 's/.*# total: .* goodput \([0-9.]*\) Mbit\/s.*/\1/p' "$1" | tail -1; }
# after FILE T: the mean goodput of rank 0's intervals that end after T
# seconds (interval lines have a decimal end time; path lines an index).
after() {
  awk -v t="$2" '$1 == "[rank" && $3 ~ /^[0-9]+[.][0-9]+$/ && $3 > t && $4 ~ /^[0-9.]+$/ { s += $4; n++ }
    END { if (n) printf "%.1f", s / n }' "$1"
}
# links FILE: how many links carried at least 5 % of the bytes from site 1
# to site 2, by the lab's counters at the end of the run ("k/N links").
links() {
  awk '$1 ~ /^s1-s2[/]p/ && $2 == "fwd" { b[NR] = $5; s += $5; n++ }
    END { k = 0; for (i in b) if (s > 0 && b[i] >= 0.05 * s) k++; printf "%d/%d links", k, n }' "$1"
}
pct() { awk -v g="$1" -v c="$2" 'BEGIN{ if (g == "") print "failed"; else printf "%.0f (%.0f %%)", g, 100*g/c }'; }

table=$OUT/table.md
{
  echo "# gocoll lab evaluation ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, kernel $(uname -r))"
  echo
  echo "One connection, rank 0 (s1h1) to rank 1 (s2h1), \`gocoll bench p2p\` for ${TIME}s (long-RTT rows 2x); goodput in Mbit/s and share of the capacity, over the whole run and, for a change at half time, over the intervals after it has had its time to settle; [k/N links]: the links that carried at least 5 % of the bytes (the 8 paths' ports are hashed onto the links anew in every run). One run per cell, on a 2-core machine shared with other work. Raw output and the lab's counters: raw/. The first rows have several flows at once (see bench/lab.sh): tcp-share, a MetaRoCE connection and a TCP flow (python3) from s1h1 to s2h1; incast, 6 p2p jobs s1hK -> s2h1 over one 400 Mbit/s link (goodputs per sender after Jain's index; drops: tbf and emulation drops over packets offered on that link, forward); AllReduce, 8 ranks on 4 hosts, \`gocoll bench allreduce -b 16M -e 16M -n 5 -w 1\`, busbw as printed (GB/s). Plots: *.goodput.png, *.paths.png."
  echo
  echo "| scenario | capacity | target (MetaRoCE) | $(for t in $TRANSPORTS; do printf '%s | ' "$t"; done)"
  echo "|---|---|---|$(for t in $TRANSPORTS; do printf -- '---|'; done)"
} >"$table"

# Rows with more than one flow; their cells are keyed by transport and
# printed in the table's columns ("-": not run for that transport).
declare -A CELL
emit() { # emit NAME CAPACITY TARGET: one table line from CELL
  local line="| $1 | $2 | $3 |" tr
  for tr in $TRANSPORTS; do line+=" ${CELL[$tr]:--} |"; done
  echo "$line" >>"$table"; CELL=()
}
# within20 GOT FAIR: "yes" when GOT is within 20 % of FAIR.
within20() { awk -v g="$1" -v f="$2" 'BEGIN{ if (g == "") print "failed"; else printf "%.0f %% of a fair %d: %s", 100*g/f, f, (g >= 0.8*f && g <= 1.2*f) ? "within 20 %" : "NOT within 20 %" }'; }

# tcp-share: one MetaRoCE connection and one TCP flow (python3, source port
# 7100 to 7001, so its link is known) at once from s1h1 to s2h1 on 4 x 200
# Mbit/s, 2 ms. TCP can use one link: its fair share is half of it (100);
# MetaRoCE's is the rest (700).
if selected tcp-share; then
  name=tcp-share secs=$TIME
  "$G" lab up --name "$LAB" ${LAB_UP_FLAGS:-} --hosts-per-site 1 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
  "$G" lab hostfile --name "$LAB" >"$BIN/hosts"
  rawm=$OUT/raw/$name.metaroce.txt rawt=$OUT/raw/$name.tcp.txt
  "$G" lab exec --name "$LAB" s2h1 -- env PROTO=tcp python3 "$BIN/mptcp.py" recv 10.2.0.11 7001 >"$rawt" 2>&1 &
  recv=$!
  # TCP runs 2 s longer on both sides, to cover the launcher's start.
  "$G" lab exec --name "$LAB" s1h1 -- env PROTO=tcp SPORT=7100 python3 "$BIN/mptcp.py" send 10.2.0.11 7001 $((secs + 2)) >"$BIN/tcp.send" 2>&1 &
  send=$!
  rc=0
  # The wall clock when MetaRoCE's first interval and its total are
  # printed: TCP's figure is taken over the same span (TCP alone before
  # and after it would count toward TCP's share).
  "$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout $((secs + 60))s \
    -x GOCOLL_TRANSPORT=metaroce -- "$G" bench p2p --time "${secs}s" 2>&1 |
    while IFS= read -r l; do
      printf '%s\n' "$l"
      [[ $l =~ ^\[rank\ 0\]\ +1\.00\  && ! -s $BIN/mr.first ]] && date +%s.%N >"$BIN/mr.first"
      [[ $l == *"# total:"* ]] && date +%s.%N >"$BIN/mr.end"
      true
    done >"$rawm" || rc=$?
  [[ ${rc:=0} -eq 0 ]] || echo "# run failed: $rc" >>"$rawm"
  wait "$send" || echo "# run failed: sender $?" >>"$rawt"
  wait "$recv" || echo "# run failed: receiver $?" >>"$rawt"
  # TCP's 1 s intervals that lie within MetaRoCE's run (from a second
  # before its first interval line to its total line, 0.2 s of slack).
  t0=$(awk '{ printf "%.3f", $1 - 1 }' "$BIN/mr.first" 2>/dev/null || true)
  t1=$(cat "$BIN/mr.end" 2>/dev/null || true)
  rm -f "$BIN/mr.first" "$BIN/mr.end"
  gto=$(awk -v t0="$t0" -v t1="$t1" '$3 == "#" && $4 == "start" { e0 = $6 }
    $1 == "[rank" && $3 ~ /^[0-9]+[.][0-9]+$/ && e0 != "" && t0 != "" && t1 != "" {
      e = e0 + $3; if (e - 1 >= t0 - 0.2 && e <= t1 + 0.2) { s += $4; n++ } }
    END { if (n) printf "%.1f", s / n }' "$rawt")
  echo "# while MetaRoCE ran ($t0 to $t1): $gto Mbit/s, the mean of the TCP intervals within it" >>"$rawt"
  tlink=$("$G" lab route --name "$LAB" s1h1 s2h1 7100 7001 tcp 2>&1 | tail -1)
  { echo "# TCP flow 10.1.0.11:7100 -> 10.2.0.11:7001, route: $tlink; sender:"; cat "$BIN/tcp.send"; } >>"$rawt"
  { echo "# lab counters after the run (both flows)"; "$G" lab stats --name "$LAB"; } | tee -a "$rawt" >>"$rawm"
  "$G" lab down --name "$LAB" >/dev/null
  gm=$(goodput "$rawm") gt=$(goodput "$rawt")
  CELL[metaroce]="$(pct "$gm" 800): $(within20 "$gm" 700) [$(links "$rawm")]"
  CELL[tcp]="while MetaRoCE ran $(pct "$gto" 800): $(within20 "$gto" 100) (whole run, alone at its ends: ${gt:-failed}) [on ${tlink##* }]"
  emit "$name (MetaRoCE + TCP at once)" 800 "each within 20 % of its fair share (MetaRoCE 700, TCP 100)"
  echo "bench/lab.sh: $name: metaroce $gm, tcp $gto while it ran ($gt whole run) Mbit/s" >&2
fi

# incast: 6 senders (s1h1..s1h6, one gocoll bench p2p job each, all at
# once) to one receiver (s2h1) behind the one 400 Mbit/s link between the
# sites. Jain's index over the 6 goodputs; drops: tbf and emulation drops
# on that link's forward direction over the packets offered to it.
if selected incast; then
  name=incast secs=$TIME
  for tr in metaroce tcp; do
    [[ " $TRANSPORTS " == *" $tr "* ]] || continue
    "$G" lab up --name "$LAB" ${LAB_UP_FLAGS:-} --hosts-per-site 6 --paths 1 --rate 400 --delay 2 --mtu 9000 >/dev/null
    "$G" lab hostfile --name "$LAB" --slots 1 >"$BIN/hosts"
    pids=()
    for k in 1 2 3 4 5 6; do
      grep -E "^$LAB-s1h$k |^$LAB-s2h1 " "$BIN/hosts" >"$BIN/hosts.$k"
      raw=$OUT/raw/$name.$tr.s1h$k.txt
      ("$G" run --hostfile "$BIN/hosts.$k" --rsh 'ip netns exec {host}' --timeout $((secs + 60))s \
        -x GOCOLL_TRANSPORT="$tr" -- "$G" bench p2p --time "${secs}s" >"$raw" 2>&1 || echo "# run failed: $?" >>"$raw") &
      pids+=($!)
    done
    wait "${pids[@]}"
    st=$OUT/raw/$name.$tr.stats.txt
    "$G" lab stats --name "$LAB" >"$st"
    "$G" lab down --name "$LAB" >/dev/null
    gs=() failed=0
    for k in 1 2 3 4 5 6; do
      raw=$OUT/raw/$name.$tr.s1h$k.txt
      g=$(goodput "$raw"); gs+=("${g:-0}")
      grep -q '^# run failed' "$raw" && failed=$((failed + 1))
    done
    CELL[$tr]=$(printf '%s\n' "${gs[@]}" | awk -v f="$failed" '{ s += $1; q += $1 * $1; n++; v = v sep sprintf("%.0f", $1); sep = "/" }
      END { printf "total %.0f (%.0f %%), Jain %.2f (%s)%s", s, 100 * s / 400, (q > 0 ? s * s / (n * q) : 0), v, (f ? ", " f " runs failed" : "") }')
    CELL[$tr]+=$(awk '$1 == "s1-s2/p1" && $2 == "fwd" { d = $7 + $8; printf ", drops %.2f %% (%d of %d)", (d + $4 ? 100 * d / (d + $4) : 0), d, d + $4 }' "$st")
    echo "bench/lab.sh: $name $tr: ${gs[*]} Mbit/s" >&2
  done
  emit "$name (6 senders to 1 receiver, one 400 Mbit/s link)" 400 "total >= 90%, Jain >= 0.9, drops < 1 %"
fi

# allreduce: 2 sites x 2 hosts x 2 ranks (4 x 200 Mbit/s between the sites,
# 2 ms), gocoll bench allreduce 16 MiB, ring and hierarchical, over auto
# (shm in a host, MetaRoCE between hosts: the metaroce column) and shm+tcp
# (the tcp column).
if selected allreduce; then
  name=allreduce
  "$G" lab up --name "$LAB" ${LAB_UP_FLAGS:-} --hosts-per-site 2 --paths 4 --rate 200 --delay 2 --mtu 9000 >/dev/null
  "$G" lab hostfile --name "$LAB" --slots 2 >"$BIN/hosts"
  busbw() { sed -n 's/^\[rank 0\] # Avg bus bandwidth *: *\([0-9.]*\).*/\1/p; s/^# Avg bus bandwidth *: *\([0-9.]*\).*/\1/p' "$1" | tail -1; }
  for algo in ring hierarchical; do
    declare -A BW=()
    for tr in auto shm+tcp; do
      raw=$OUT/raw/$name-$algo.${tr/+/-}.txt
      "$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout 300s \
        -x GOCOLL_TRANSPORT="$tr" -- "$G" bench allreduce -b 16M -e 16M -n 5 -w 1 --algo "$algo" >"$raw" 2>&1 || echo "# run failed: $?" >>"$raw"
      { echo "# lab counters after the run"; "$G" lab stats --name "$LAB"; } >>"$raw"
      BW[$tr]=$(busbw "$raw")
      echo "bench/lab.sh: $name $algo $tr: busbw ${BW[$tr]} GB/s" >&2
    done
    CELL[metaroce]="busbw ${BW[auto]:-failed} GB/s (auto: shm + MetaRoCE)"
    CELL[tcp]="busbw ${BW[shm+tcp]:-failed} GB/s (shm+tcp)"
    ratio=$(awk -v a="${BW[auto]}" -v b="${BW[shm+tcp]}" 'BEGIN{ if (a == "" || b == "" || b == 0) print "?"; else printf "%.2f", a / b }')
    CELL[metaroce]+="; ${ratio}x tcp"
    tgt=">= 3x the ring over TCP"; [[ $algo == ring ]] || tgt="(extra row, no target)"
    emit "2 sites x 2 hosts x 2 ranks, $algo AllReduce 16 MiB" 800 "$tgt"
  done
  "$G" lab down --name "$LAB" >/dev/null
fi


for row in "${ROWS[@]}"; do
  IFS='|' read -r name cap target mult upflags event cap2 settle <<<"$row"
  selected "$name" || continue
  secs=$((TIME * mult))
  # Long-RTT rows keep 64 MiB of messages in flight (p2p's default 16 MiB,
  # 4 messages of 4 MiB each completing a round trip after its last byte,
  # caps one connection near 500 Mbit/s at 50 ms one way: 100 ms x 800
  # Mbit/s is 10 MB in flight).
  pflags=()
  [[ $mult -gt 1 ]] && pflags=(--window 64M)
  line="| $name | $cap | $target |"
  for tr in $TRANSPORTS; do
    # shellcheck disable=SC2086
    "$G" lab up --name "$LAB" ${LAB_UP_FLAGS:-} --hosts-per-site 1 $upflags >/dev/null
    if [[ $event == shape:* ]]; then
      IFS=',' read -ra shapes <<<"${event#shape:}"
      for s in "${shapes[@]}"; do "$G" lab shape --name "$LAB" "${s%%:*}" --rate "${s#*:}" >/dev/null; done
    fi
    "$G" lab hostfile --name "$LAB" >"$BIN/hosts"
    raw=$OUT/raw/$name.$tr.txt
    if [[ $event == midrun:* ]]; then
      # shellcheck disable=SC2086
      (sleep $((secs / 2)) && "$G" lab ${event#midrun:} --name "$LAB" >/dev/null) &
    fi
    if [[ $tr == mptcp ]]; then
      run_mptcp "$raw" "$secs"
    else
      "$G" run --hostfile "$BIN/hosts" --rsh 'ip netns exec {host}' --timeout $((secs + 60))s \
        -x GOCOLL_TRANSPORT="$tr" -- "$G" bench p2p --time "${secs}s" "${pflags[@]}" >"$raw" 2>&1 || echo "# run failed: $?" >>"$raw"
    fi
    wait
    { echo "# lab counters after the run"; "$G" lab stats --name "$LAB"; } >>"$raw"
    "$G" lab down --name "$LAB" >/dev/null
    cell=$(pct "$(goodput "$raw")" "$cap")
    if [[ -n $cap2 ]]; then
      cell+="; after: $(pct "$(after "$raw" $((secs / 2 + settle)))" "$cap2")"
    fi
    cell+=" [$(links "$raw")]"
    if grep -q '^# run failed' "$raw"; then cell="failed: $cell"; fi
    line+=" $cell |"
    echo "bench/lab.sh: $name $tr: $(goodput "$raw") Mbit/s" >&2
  done
  echo "$line" >>"$table"
done
go run ./bench/labplot -out "$OUT" "$OUT"/raw/*.txt || echo "bench/lab.sh: plots failed" >&2
cat "$table"
