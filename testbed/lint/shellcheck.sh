#!/usr/bin/env bash
# npm run lint:shell — shellcheck (Debian's package) over every tracked shell script, sourced files followed.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v shellcheck >/dev/null || { echo "lint:shell needs shellcheck on PATH: apt-get install shellcheck" >&2; exit 1; }
git ls-files -z '*.sh' | xargs -0 shellcheck --external-sources --severity=warning
