#!/usr/bin/env bash
# The clients the real-Pulp tests use, as a user would: pulp-cli (PyPI, hash-locked in
# requirements.txt) in a venv outside the checkout, skopeo, psql and gpg (Debian). Prints the venv's bin dir.
#
#   testbed/clients/install.sh          install what is missing
#   testbed/clients/install.sh --lock   regenerate requirements.txt from requirements.in
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/locked-venv.sh
source "$HERE/../lib/locked-venv.sh"
locked_venv "$HERE" "${PULP_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulp-pulumi-clients}" pulp "${1:-}"
# Another installer may hold dpkg's lock (the lanes of .ci/run start together): wait for it.
apt_waiting() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
# command, Debian package
for tool in "skopeo skopeo" "psql postgresql-client" "gpg gpg"; do
  read -r cmd pkg <<<"$tool"
  command -v "$cmd" >/dev/null && continue
  [[ $(id -u) == 0 ]] || { echo "clients: $cmd is missing (apt-get install $pkg)" >&2; exit 1; }
  apt_waiting install -y -q "$pkg" >/dev/null 2>&1 || { apt_waiting update -q >&2 && apt_waiting install -y -q "$pkg" >&2; }
done
echo "$VENV/bin"
