#!/usr/bin/env bash
# An S3 API server for the real-Pulp tests: moto's server (PyPI, hash-locked in requirements.txt), with
# boto3 beside it for the test's own reads (presigned URLs, listings). In a venv outside the checkout;
# prints its bin dir. Object storage stands in for a bucket a user's backups go to.
#
#   testbed/s3/install.sh          install what is missing
#   testbed/s3/install.sh --lock   regenerate requirements.txt from requirements.in
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/locked-venv.sh
source "$HERE/../lib/locked-venv.sh"
locked_venv "$HERE" "${PULP_S3_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulp-pulumi-s3}" moto_server "${1:-}"
echo "$VENV/bin"
