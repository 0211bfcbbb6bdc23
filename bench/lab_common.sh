# bench/lab_common.sh: the set-up every lab script of bench/ shares. Source
# it from the repository's root, after LAB (the lab's name) is set.

# lab_setup SCRIPT refuses to run without root (naming SCRIPT), then makes
# BIN, a private directory, and G, the gocoll binary's path in it; at exit
# the lab LAB is brought down and BIN removed (the trap on EXIT is set
# here: a script that traps EXIT itself must call cleanup).
lab_setup() {
	[[ $(id -u) -eq 0 ]] || { echo "bench/$1: needs root (network namespaces)" >&2; exit 2; }
	BIN=$(mktemp -d)
	chmod 755 "$BIN"
	G=$BIN/gocoll
	cleanup() { "$G" lab down --name "$LAB" >/dev/null 2>&1 || true; rm -rf "$BIN"; }
	trap cleanup EXIT
}

# lab_build puts gocoll at G: a copy of $GOCOLL where it is set, else a
# build of ./cmd/gocoll.
lab_build() {
	if [[ -n ${GOCOLL:-} ]]; then cp "$GOCOLL" "$G"; else go build -o "$G" ./cmd/gocoll; fi
}

# bytes SIZE prints SIZE in bytes, SIZE a number with an optional K, M or G
# (powers of 2): bytes 16M -> 16777216.
bytes() {
	awk -v s="$1" 'BEGIN { m = 1; u = substr(s, length(s)); if (u == "K") m = 2^10; else if (u == "M") m = 2^20; else if (u == "G") m = 2^30; if (m > 1) s = substr(s, 1, length(s) - 1); printf "%d", s * m }'
}

# delayd_pids prints the pids of lab LAB's delay daemons (after lab up).
delayd_pids() { pgrep -f "lab delayd --config /run/gocoll-lab/$LAB/" || true; }

# delayd_ticks prints the CPU ticks (user + system) the delay daemons of
# DPIDS (delayd_pids) have used so far.
delayd_ticks() {
	local t=0 p
	for p in $DPIDS; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done
	echo $t
}

# wanfrom RAW: where rank 0's WAN figure came from (its "probe bandwidth"
# line): the lone pair's, the best spread pair's and the contended
# round's, and the second look's where it ran (collective/tune/probe/
# spreadmore.go), in MB/s; empty where the run logged none.
wanfrom() {
  local again
  again=$(sed -n 's/^\[rank 0\] .*msg="gocoll: probe bandwidth".* level=wan .* again=\([^ ]*\).*/\1/p' "$1" | head -1)
  sed -n 's/^\[rank 0\] .*msg="gocoll: probe bandwidth".* level=wan lone=\([^ ]*\) spread=\([^ ]*\) contended=\([^ ]*\) .*/\1 \2 \3/p' "$1" |
    head -1 | awk -v again="$again" '{ printf "lone %.1f, spread %.1f, round %.1f", $1 / 1e6, $2 / 1e6, $3 / 1e6; if (again > 0) printf ", again %.1f", again / 1e6 }'
}

# sports SRC DST DPORT0 BASE [SPAN]: a source port for each of the PATHS WAN
# paths from host SRC to host DST (names such as s1h1; addr NAME prints a
# host's address), comma-separated: the first from BASE + i*SPAN (SPAN
# default 200) that the lab's ECMP hash, asked of SRC's site router with ip
# route get, puts on path i for UDP to DST's port DPORT0 + i.
sports() {
  local r sa da i p sp="" dev span=${5:-200}
  sa=$(addr "$1") da=$(addr "$2")
  r=$LAB-${1:0:2}r
  for ((i = 0; i < PATHS; i++)); do
    dev=s${2:1:1}p$((i + 1))
    for ((p = $4 + i * span; p < $4 + i * span + span; p++)); do
      if ip netns exec "$r" ip route get "$da" from "$sa" iif lan ipproto udp sport $p dport $(($3 + i)) 2>/dev/null | grep -q "dev $dev "; then
        sp+=${sp:+,}$p
        break
      fi
    done
  done
  echo "$sp"
}
