#!/usr/bin/env bash
# The Google side of the real-Pulp test of storage.gcs: fake-gcs-server (the GCS JSON and XML APIs in one
# process, no authentication), built from its Go module on first use into a cache outside the checkout.
# Prints the binary's path.
set -euo pipefail
FAKE_GCS_VERSION=v1.56.1
BIN="${XDG_CACHE_HOME:-$HOME/.cache}/pulp-pulumi-toolchain/fake-gcs-server-$FAKE_GCS_VERSION/bin"
if [[ ! -x "$BIN/fake-gcs-server" ]]; then
  command -v go >/dev/null || { echo "fake-gcs-server: 'go' is not on PATH; install Go >= 1.24 first" >&2; exit 1; }
  start=$SECONDS
  echo "fake-gcs-server: building $FAKE_GCS_VERSION into $BIN" >&2
  mkdir -p "$BIN"
  GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOBIN="$BIN" \
    go install "github.com/fsouza/fake-gcs-server@$FAKE_GCS_VERSION" >&2
  echo "fake-gcs-server: built in $((SECONDS - start)) s" >&2
fi
echo "$BIN/fake-gcs-server"
