# shellcheck shell=bash
# Shared by the recipes: run a command inside a rootfs (chroot in a private mount namespace, so the
# /dev and /proc mounts vanish with it), with the host's DNS for apt and pip, and the host's CA bundle
# for pip (this machine's egress re-signs TLS). Both are build-time only: clean_root removes them, so
# no image trusts the build host's CAs.
in_root() {
  local root=$1; shift
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  mkdir -p "$root/tmp" && cp -L "${BUILD_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}" "$root/tmp/.build-ca.crt"
  unshare --mount --fork -- sh -ec 'r=$1; shift
    mount --rbind /dev "$r/dev"; mount -t proc proc "$r/proc"
    exec chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
      PIP_CERT=/tmp/.build-ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 "$@"' in_root "$root" "$@"
}

# apt-get install without starting services, then drop the package lists, caches and logs.
apt_install() {
  local root=$1; shift
  printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"; chmod 755 "$root/usr/sbin/policy-rc.d"
  in_root "$root" sh -ec 'apt-get update -qq; apt-get install -y -qq --no-install-recommends "$@" >/dev/null' apt "$@"
  rm -f "$root/usr/sbin/policy-rc.d"
}

# Removes what a build leaves behind and what differs between two builds of the same inputs.
clean_root() {
  local root=$1
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
    "$root"/var/log/* "$root"/root/.cache "$root"/tmp/* "$root"/var/tmp/* "$root"/etc/resolv.conf
  : > "$root/etc/resolv.conf"
}
