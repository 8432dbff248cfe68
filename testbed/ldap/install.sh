#!/usr/bin/env bash
# An LDAP directory for the real-Pulp tests: Debian's slapd and ldap-utils, unpacked (never installed:
# no service starts, nothing lands in /usr) into a cache outside the checkout, with the two libraries
# bookworm's base lacks. Prints the root; testbed/real/ldap.ts runs $root/usr/sbin/slapd with
# LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu.
set -euo pipefail
PACKAGES=(slapd ldap-utils libltdl7 libodbc2)
CACHE=${PULP_LDAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulp-pulumi-ldap}
command -v apt-get >/dev/null || { echo "testbed/ldap needs apt-get (Debian) to fetch slapd" >&2; exit 1; }
# The versions the host's package lists name are the pin: the same lists give the same root.
versions=$(apt-cache policy "${PACKAGES[@]}" | awk '/^[^ ]/ {p=$1} /Candidate:/ {print p $2}')
if [[ $versions == *"(none)"* || -z $versions ]]; then
  apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null # another installer's lock: wait for it
  versions=$(apt-cache policy "${PACKAGES[@]}" | awk '/^[^ ]/ {p=$1} /Candidate:/ {print p $2}')
fi
root="$CACHE/$(sha256sum <<<"$versions" | cut -c1-12)"
if [[ ! -x $root/usr/sbin/slapd ]]; then
  work=$(mktemp -d "$CACHE.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && apt-get download -q -o APT::Sandbox::User=root "${PACKAGES[@]}" >/dev/null)
  for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
  mkdir -p "$CACHE" && rm -rf "$root" && mv "$work/root" "$root"
fi
LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu" "$root/usr/sbin/slapd" -VV 2>&1 | grep -q slapd \
  || { echo "slapd in $root does not run" >&2; exit 1; }
echo "$root"
