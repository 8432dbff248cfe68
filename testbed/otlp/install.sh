#!/usr/bin/env bash
# An OTLP/HTTP metrics receiver for the real-Pulp tests (receiver.py), standing in for the OpenTelemetry
# Collector a user runs: opentelemetry-proto (PyPI, hash-locked in requirements.txt) decodes what Pulp's
# OTLPMetricExporter sends. In a venv outside the checkout; prints its bin dir.
#
#   testbed/otlp/install.sh          install what is missing
#   testbed/otlp/install.sh --lock   regenerate requirements.txt from requirements.in
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/locked-venv.sh
source "$HERE/../lib/locked-venv.sh"
locked_venv "$HERE" "${PULP_OTLP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulp-pulumi-otlp}" python3 "${1:-}"
echo "$VENV/bin"
