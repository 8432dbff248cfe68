#!/usr/bin/env bash
# An S3 API server for the real-Pulp tests: moto's server (PyPI, hash-locked in requirements.txt), with
# boto3 beside it for the test's own reads (presigned URLs, listings). In a venv outside the checkout;
# prints its bin dir. Object storage stands in for a bucket a user's backups go to.
#
#   testbed/s3/install.sh          install what is missing
#   testbed/s3/install.sh --lock   regenerate requirements.txt from requirements.in
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LOCK=$HERE/requirements.txt
KEY=$(sha256sum "$LOCK" | cut -c1-12)
VENV=${PULP_S3_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulp-pulumi-s3}/$KEY

if [[ ${1:-} == --lock ]]; then
  tools=$(mktemp -d)
  python3 -m venv "$tools" && "$tools/bin/pip" install -q pip-tools==7.4.1
  (cd "$HERE/../.." && "$tools/bin/pip-compile" -q --generate-hashes --allow-unsafe --strip-extras \
    -o testbed/s3/requirements.txt testbed/s3/requirements.in)
  # A machine-wide pip.conf may add its own --find-links line; the lock must not depend on it.
  sed -i '/^--find-links/d' "$LOCK"
  rm -rf "$tools"
  exit 0
fi

if [[ ! -x $VENV/bin/moto_server ]]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --require-hashes --no-deps -r "$LOCK" >&2
fi
echo "$VENV/bin"
