#!/usr/bin/env bash
# An HTTP proxy for the real-Pulp tests: proxy.py (PyPI, hash-locked in requirements.txt), standing in
# for the corporate proxy pulp:proxy names. In a venv outside the checkout; prints its bin dir.
#
#   testbed/proxy/install.sh          install what is missing
#   testbed/proxy/install.sh --lock   regenerate requirements.txt from requirements.in
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/locked-venv.sh
source "$HERE/../lib/locked-venv.sh"
locked_venv "$HERE" "${PULP_PROXY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulp-pulumi-proxy}" proxy "${1:-}"
echo "$VENV/bin"
