#!/usr/bin/env bash
# Runs every gocoll test on a fresh Debian machine with Go installed: it
# installs what the tests need (as root), then vets and tests every package.
# Usage: ./test.sh            (the whole suite; CI runs exactly this)
#        ./test.sh -short     (extra flags go to `go test`)
set -euo pipefail
cd "$(dirname "$0")"

# command:package pairs; a package is installed only if its command is missing.
# The launcher tests need mpirun (openmpi-bin) and a one-node Slurm (slurm-wlm, munge);
# the arm64 kernels run under qemu-user; the OpenSSH launch test needs sshd (openssh-server).
need=()
for pair in ip:iproute2 iptables:iptables mpirun:openmpi-bin slurmctld:slurm-wlm munged:munge qemu-aarch64:qemu-user sshd:openssh-server; do
  PATH="$PATH:/usr/sbin:/sbin" command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair##*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing ${need[*]}"
    # Keep package scripts from starting daemons (the tests start their own).
    own_policy=
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && own_policy=1
    fi
    if ! { apt-get update -qq >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }; then
      echo "test.sh: installing ${need[*]} failed; tests that need them will say they skip"
    fi
    [ -z "$own_policy" ] || rm -f /usr/sbin/policy-rc.d
  else
    echo "test.sh: ${need[*]} missing and not installable here; tests that need them will say they skip"
  fi
fi

go version
go vet ./...
# The arm64 files (NEON kernels, their assembly): only collective/reduce has
# any (its generators under internal/ are the same on every GOARCH).
GOARCH=arm64 go vet ./collective/reduce/
# 32-bit: test constants above 2^31 fail the build there (int is 32 bits).
# Type-checked from source (~8 CPU-s), not `GOARCH=386 go vet` (125 CPU-s
# cold: it compiles the standard library and every dependency for 386). The
# checker is built for this machine and told the target by GOARCH: `GOARCH=386
# go run` builds a 386 binary, which a kernel without 32-bit emulation (session
# 35's Firecracker VM) cannot run ("exec format error").
typecheck_dir=$(mktemp -d)
trap 'rm -rf "$typecheck_dir"' EXIT
go build -o "$typecheck_dir/typecheck" ./internal/typecheck
GOARCH=386 "$typecheck_dir/typecheck" ./...
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "test.sh: gofmt would change: $unformatted" >&2
  exit 1
fi
# go test's own vet (a subset of go vet's analyzers) would re-run on every
# package go vet ./... checked above (~18 CPU-s for transport and collective
# alone); the race and arm64 runs below skip it too (what they alone compile:
# the race-tagged files, 45 lines of constants and collective's
# boardstore_other.go, which the 386 type-check covers).
go test -vet=off -timeout 14m "$@" ./...
# The arm64 (NEON) reduction kernels against the portable ones, under qemu-user.
qemu=$(command -v qemu-aarch64 || command -v qemu-aarch64-static || true)
if [ -n "$qemu" ]; then
  GOARCH=arm64 go test -vet=off -exec "$qemu" -timeout 5m "$@" ./collective/reduce/ ./collective/dtype/
else
  echo "test.sh: qemu-aarch64 missing: the arm64 kernels are not tested"
fi
# The race detector over the concurrent packages, in their short form. The
# MetaRoCE core is a pure state machine (no goroutines, only read-only
# package variables): under -race only its tests that run simulations in
# parallel subtests can find anything (state shared between connections),
# so only those run there; the rest of it ran above.
core=github.com/gocoll/gocoll/transport/metaroce
parallel='^(TestBidirectionalMesh|TestRandomCancelsAndLatePosts|TestChaos|TestExactlyOnceUnderFaults)$'
found=$(go test -list "$parallel" "$core" | grep -c '^Test' || true)
if [ "$found" != 4 ]; then
  echo "test.sh: the race run's MetaRoCE core tests: $found of 4 found (renamed?)" >&2
  exit 1
fi
# Packages with no goroutine, lock, atomic or unsafe in them or their tests
# (nor in what their tests import from gocoll) cannot race and give checkptr
# nothing to check: they ran above, not here (~40 CPU-s).
serial='transport/metaroce/(wire|simfabric|internal/crc32c)|collective/(dtype|tune|reduce/internal/.*)|launcher/hosts'
go test -race -short -vet=off -timeout 10m $(go list ./transport/... ./collective/... ./launcher/... |
  grep -vx "$core" | grep -vxE "github.com/gocoll/gocoll/($serial)")
go test -race -short -vet=off -timeout 10m -run "$parallel" "$core"
