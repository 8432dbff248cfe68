#!/usr/bin/env bash
# npm run lint:workflows — lints .github/workflows with actionlint, built from its Go module on first use
# into the toolchain cache (never the checkout). shellcheck, when on PATH, is used by actionlint for run:
# blocks; it is not required.
#
#   testbed/lint/actionlint.sh           build if missing, then lint
#   testbed/lint/actionlint.sh --print   print the binary's path only
set -euo pipefail
cd "$(dirname "$0")/../.."

ACTIONLINT_VERSION=v1.7.7
BIN="${XDG_CACHE_HOME:-$HOME/.cache}/pulp-pulumi-toolchain/actionlint-$ACTIONLINT_VERSION/bin"
if [[ "${1:-}" == "--print" ]]; then echo "$BIN/actionlint"; exit 0; fi

if [[ ! -x "$BIN/actionlint" ]]; then
  command -v go >/dev/null || { echo "actionlint: 'go' is not on PATH; install Go >= 1.24 first" >&2; exit 1; }
  start=$SECONDS
  echo "actionlint: building $ACTIONLINT_VERSION into $BIN" >&2
  mkdir -p "$BIN"
  GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOBIN="$BIN" \
    go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
  echo "actionlint: built in $((SECONDS - start)) s" >&2
fi

command -v shellcheck >/dev/null || echo "actionlint: shellcheck not on PATH; run: blocks are not shell-checked" >&2
"$BIN/actionlint" -no-color .github/workflows/*.yml
