#!/usr/bin/env bash
# The clients the real-Pulp tests use, as a user would: pulp-cli (PyPI, hash-locked in
# requirements.txt) in a venv outside the checkout, skopeo and psql (Debian). Prints the venv's bin dir.
#
#   testbed/clients/install.sh          install what is missing
#   testbed/clients/install.sh --lock   regenerate requirements.txt from requirements.in
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LOCK=$HERE/requirements.txt
KEY=$(sha256sum "$LOCK" | cut -c1-12)
VENV=${PULP_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulp-pulumi-clients}/$KEY

if [[ ${1:-} == --lock ]]; then
  tools=$(mktemp -d)
  python3 -m venv "$tools" && "$tools/bin/pip" install -q pip-tools==7.4.1
  (cd "$HERE/../.." && "$tools/bin/pip-compile" -q --generate-hashes --allow-unsafe --strip-extras \
    -o testbed/clients/requirements.txt testbed/clients/requirements.in)
  # A machine-wide pip.conf may add its own --find-links line; the lock must not depend on it.
  sed -i '/^--find-links/d' "$LOCK"
  rm -rf "$tools"
  exit 0
fi

if [[ ! -x $VENV/bin/pulp ]]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --require-hashes --no-deps -r "$LOCK" >&2
fi
# command, Debian package
for tool in "skopeo skopeo" "psql postgresql-client"; do
  read -r cmd pkg <<<"$tool"
  command -v "$cmd" >/dev/null && continue
  [[ $(id -u) == 0 ]] || { echo "clients: $cmd is missing (apt-get install $pkg)" >&2; exit 1; }
  apt-get install -y -q "$pkg" >/dev/null 2>&1 || { apt-get update -q >&2 && apt-get install -y -q "$pkg" >&2; }
done
echo "$VENV/bin"
