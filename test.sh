#!/usr/bin/env bash
# Runs every gocoll test on a fresh Debian machine with Go installed: it
# installs what the tests need (as root), then vets and tests every package.
# Usage: ./test.sh            (the whole suite; CI runs exactly this)
#        ./test.sh -short     (extra flags go to `go test`)
set -euo pipefail
cd "$(dirname "$0")"

need=()
for pair in ip:iproute2 iptables:iptables; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair##*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing ${need[*]}"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "test.sh: ${need[*]} missing and not installable here; tests that need them will say they skip"
  fi
fi

go version
go vet ./...
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "test.sh: gofmt would change: $unformatted" >&2
  exit 1
fi
go test -timeout 14m "$@" ./...
# The race detector over the concurrent packages, in their short form.
go test -race -short -timeout 10m ./transport/... ./collective/... ./launcher/...
