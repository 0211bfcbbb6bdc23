# bench/build_revs.sh: sourced by the A/B scripts (shm_ab.sh, cpu_ab.sh)
# from the repository's top directory.
#
# build_revs DIR REV... builds cmd/gocoll of each commit, from `git
# archive` (uncommitted work does not count), into DIR/gocoll-LABEL, LABEL
# being the commit's short hash, and sets the array labels to the LABELs
# in order.
build_revs() {
  local dir=$1 rev l
  shift
  labels=()
  for rev in "$@"; do
    l=$(git rev-parse --short "$rev")
    mkdir "$dir/src-$l"
    git archive "$rev" | tar -x -C "$dir/src-$l"
    (cd "$dir/src-$l" && go build -o "$dir/gocoll-$l" ./cmd/gocoll)
    labels+=("$l")
  done
}
