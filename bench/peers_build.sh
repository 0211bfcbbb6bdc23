# bench/peers_build.sh: sourced by bench/shm_ab.sh (and usable from any
# script) from the repository's top directory.
#
# build_mpi_coll_bench OUT PEERS_DIR [SIZE...] compiles OUT (a binary)
# from PEERS_DIR/mpi_coll_bench.c, the OpenMPI benchmark of ../shared/peers
# (not ours: it is the peer harness's own program, and it is left as it
# is). That program measures only the sizes of its fixed table
# (kSizes: 8 B, 1 KiB, 64 KiB, 1 MiB, 16 MiB, 64 MiB), so when SIZEs are
# given the source is copied into a temporary directory and the table's
# line is rewritten by sed to the union of the original sizes and the
# SIZEs (bytes, sorted), before mpicc compiles the copy. Its schedule per
# size (warm-up and timed calls) is the program's own, by size class, so
# an added size such as 8 KiB gets 20/200 as 64 KiB does, and gocoll bench
# --peers-schedule gives it the same. PEERS_DIR is never written.
#
# It fails, saying why, when a SIZE is not a positive integer or when the
# table's line is not found (the peer program changed: look at its
# kSizes before trusting the figures).
build_mpi_coll_bench() {
  local out=$1 dir=$2 tmp s sizes
  shift 2
  if (($# == 0)); then
    mpicc -O2 -o "$out" "$dir/mpi_coll_bench.c"
    return
  fi
  for s in "$@"; do
    [[ $s =~ ^[1-9][0-9]*$ ]] || { echo "build_mpi_coll_bench: size '$s' is not a positive integer of bytes" >&2; return 2; }
  done
  sizes=$(printf '%s\n' 8 1024 65536 1048576 16777216 67108864 "$@" | sort -nu | paste -sd, - | sed 's/,/, /g')
  tmp=$(mktemp -d)
  if ! grep -q '^static const size_t kSizes\[\] = {.*};$' "$dir/mpi_coll_bench.c"; then
    echo "build_mpi_coll_bench: no 'static const size_t kSizes[] = {...};' line in $dir/mpi_coll_bench.c" >&2
    rm -rf "$tmp"
    return 2
  fi
  sed "s/^static const size_t kSizes\[\] = {.*};\$/static const size_t kSizes[] = {$sizes};/" \
    "$dir/mpi_coll_bench.c" >"$tmp/mpi_coll_bench.c"
  mpicc -O2 -o "$out" "$tmp/mpi_coll_bench.c" || { rm -rf "$tmp"; return 1; }
  rm -rf "$tmp"
}
