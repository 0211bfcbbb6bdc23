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
