#!/usr/bin/env bash
# The Azure side of the real-Pulp test of storage.azure: Azurite, the Azure Storage emulator (npm, locked
# by package-lock.json), and azure-storage-blob (PyPI, hash-locked in requirements.txt, the release Pulp's
# images carry) for the test's own reads: a container to create, blobs to list. Both outside the checkout,
# keyed by their locks. Prints two lines: Azurite's bin dir, then the venv's.
#
#   testbed/azure/install.sh          install what is missing
#   testbed/azure/install.sh --lock   regenerate requirements.txt (npm install --package-lock-only for npm's)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${PULP_AZURE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulp-pulumi-azure}
# shellcheck source=../lib/locked-venv.sh
source "$HERE/../lib/locked-venv.sh"
locked_venv "$HERE" "$CACHE/venv" python3 "${1:-}"
NODE=$CACHE/npm/$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -c1-12)
if [[ ! -x $NODE/node_modules/.bin/azurite-blob ]]; then
  rm -rf "$NODE"
  mkdir -p "$NODE"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$NODE/"
  (cd "$NODE" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
fi
echo "$NODE/node_modules/.bin"
echo "$VENV/bin"
