#!/usr/bin/env bash
# The Debian packages the real node runs on: containerd, runc, the CNI plugins, iptables and friends,
# and busybox-static for the smoke test's tiny image. Idempotent: installs only what is missing, and
# runs `apt-get update` only when an install from the current lists fails.
#
#   testbed/node/packages.sh          install what is missing (needs root), print nothing else
#   testbed/node/packages.sh --check  exit 1 and name what is missing, install nothing
set -euo pipefail

# Versions are Debian bookworm's (measured with these): containerd 1.6.20~ds1-1+deb12u3,
# runc 1.1.5+ds1-1+deb12u1, containernetworking-plugins 1.1.1+ds1-3+b5, iptables 1.8.9-2.
PACKAGES=(containerd runc containernetworking-plugins iptables conntrack socat ethtool busybox-static)

missing=()
for p in "${PACKAGES[@]}"; do
  [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == "install ok installed" ]] || missing+=("$p")
done
((${#missing[@]})) || exit 0
if [[ ${1:-} == --check ]]; then
  echo "real node: missing Debian packages: ${missing[*]} (run testbed/node/packages.sh as root)" >&2
  exit 1
fi
[[ $(id -u) == 0 ]] || { echo "real node: missing Debian packages ${missing[*]}; install them as root: apt-get install ${missing[*]}" >&2; exit 1; }
echo "[node] installing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# --no-install-recommends: containerd would otherwise pull in more than the node uses.
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; then
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian starts services through invoke-rc.d: with no init system here nothing is started, but a
# machine with one would now run a containerd on the global socket; the node uses its own either way.
