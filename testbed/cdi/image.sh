#!/usr/bin/env bash
# Makes CDI's images as OCI archives for `ctr -n k8s.io images import`, laid out like the upstream ones
# (the module's cmd/<name>/BUILD.bazel `container_image` rules: the binary in /usr/bin, upstream's
# ENTRYPOINT, USER 1001, WorkingDir /home/<name>):
#
#   localhost/cdi-operator:<version>     /usr/bin/cdi-operator                    static rootfs
#   localhost/cdi-apiserver:<version>    /usr/bin/cdi-apiserver -alsologtostderr  static rootfs
#   localhost/cdi-uploadproxy:<version>  /usr/bin/cdi-uploadproxy -alsologtostderr static rootfs
#   localhost/cdi-controller:<version>   /usr/bin/cdi-controller -alsologtostderr Debian base
#   localhost/cdi-importer:<version>     /usr/bin/cdi-importer -alsologtostderr   Debian base
#
# Upstream's base is CentOS Stream 9 (bash, coreutils, curl, tar, CA bundle; the importer adds qemu-img,
# nbdkit and libnbd). What the binaries use from it decides the base here:
# - operator, apiserver, uploadproxy exec nothing and are probed over HTTP: a rootfs with only the static
#   binary, /etc/passwd and /etc/group (root, nobody), the CA bundle (this machine's Debian
#   ca-certificates), /tmp 1777 and the working directory.
# - the controller's readiness probe (set by the operator) is `exec: cat /tmp/ready`, and the importer
#   runs /usr/bin/tar for `contentType: archive` (pkg/util UnArchiveTar), /usr/bin/ln and
#   /usr/sbin/blockdev: both get the test bed's shared Debian bookworm base rootfs
#   (`testbed/images/build.py base-path`: debootstrap minbase + python3 + ca-certificates, which has
#   coreutils, tar, util-linux), the same base every testbed/images image starts from.
# - Not in the importer: qemu-img and nbdkit. The importer starts and imports `contentType: archive`
#   over http(s) without them (it streams the tar to /usr/bin/tar); `contentType: kubevirt` (disk
#   images: qemu-img convert), registry and VDDK imports would fail. To add them, install Debian's
#   qemu-utils / nbdkit into this rootfs with testbed/images/recipes/lib.sh `apt_install`.
# The importer image also carries upstream's other /usr/bin tools: cdi-containerimage-server (copied
# into registry "node pull" importer pods), cdi-image-size-detection, cdi-source-update-poller.
#
# Writes ${CDI_CACHE:-~/.cache/pulp-pulumi-cdi}/<version>/images/<name>.tar (and <name>.config.json,
# <name>.digests.json); prints the archive paths. An archive whose key (binaries, base, this script,
# the writer) is unchanged is reused. CDI_IMAGES="cdi-operator ..." makes a subset.
# The archive writer is testbed/images/oci.py (OCI_WRITER overrides). Needs root (numeric owners).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
writer="${OCI_WRITER:-$repo/testbed/images/oci.py}"
[ -f "$writer" ] || { echo "image.sh: no OCI archive writer at $writer (set OCI_WRITER)" >&2; exit 1; }
cache="${CDI_CACHE:-$HOME/.cache/pulp-pulumi-cdi}/$CDI_VERSION"
all=(cdi-operator cdi-controller cdi-apiserver cdi-uploadproxy cdi-importer)
read -r -a want <<<"${CDI_IMAGES:-${all[*]}}"
bin="$("$here/build.sh")"
mkdir -p "$cache/images"
base=""
debian_base() { # the shared base rootfs of testbed/images (built there if missing)
  [ -n "$base" ] || base="$(python3 "$repo/testbed/images/build.py" base-path)"
  [ -d "$base/usr/bin" ] || { echo "image.sh: no Debian base rootfs at '$base'" >&2; exit 1; }
}

make_image() { # name
  local n=$1 rootfs files=("$1") args=(-alsologtostderr) kind=static key out root
  case "$n" in
    cdi-operator) args=() ;;
    cdi-controller) kind=debian ;;
    cdi-importer) kind=debian; files+=(cdi-containerimage-server cdi-image-size-detection cdi-source-update-poller) ;;
    cdi-apiserver|cdi-uploadproxy) ;;
    *) echo "image.sh: unknown image $n" >&2; return 1 ;;
  esac
  local name="localhost/$n:$CDI_VERSION" workdir="/home/$n"
  [ "$n" = cdi-importer ] && workdir=""   # upstream's importer image sets no working directory
  if [ "$kind" = debian ]; then debian_base; rootfs="$base"; else rootfs=static; fi
  out="$cache/images/$n.tar"
  key="$( { for f in "${files[@]}"; do sha256sum "$bin/$f" | cut -d' ' -f1; done
    sha256sum "$here/image.sh" "$writer" | cut -d' ' -f1; echo "$name $rootfs"
    if [ "$kind" = static ]; then dpkg-query -W -f='${Package} ${Version}\n' ca-certificates; fi; } | sha256sum | cut -c1-16)"
  if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then echo "$out"; return 0; fi
  local start; start=$(date +%s)
  root="$(mktemp -d "$cache/images/rootfs.XXXXXX")"
  if [ "$kind" = debian ]; then
    rmdir "$root"; cp -a --reflink=auto "$base" "$root"
  else
    mkdir -p "$root"/{usr/bin,etc/ssl/certs,tmp,dev,proc,sys,run}
    chmod 0755 "$root"; chmod 1777 "$root/tmp"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' > "$root/etc/passwd"
    printf 'root:x:0:\nnobody:x:65534:\n' > "$root/etc/group"
    cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  fi
  for f in "${files[@]}"; do install -m 0755 -o 0 -g 0 "$bin/$f" "$root/usr/bin/$f"; done
  if [ -n "$workdir" ]; then mkdir -p "$root$workdir"; chown 1001:0 "$root$workdir"; fi
  python3 - "$n" "$name" "$workdir" "$CDI_VERSION" "$CDI_COMMIT" "${args[@]}" > "$cache/images/$n.config.json" <<'PY'
import json, sys
n, name, workdir, version, commit, *args = sys.argv[1:]
config = {"Entrypoint": [f"/usr/bin/{n}", *args], "User": "1001",
          "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
          "Labels": {"org.opencontainers.image.version": version, "org.opencontainers.image.revision": commit,
                     "org.opencontainers.image.source": "https://github.com/kubevirt/containerized-data-importer"}}
if workdir:
    config["WorkingDir"] = workdir
print(json.dumps(config, indent=1))
PY
  python3 "$writer" write --rootfs "$root" --name "$name" --out "$out" \
    --config-json "$cache/images/$n.config.json" > "$cache/images/$n.digests.json"
  rm -rf "$root"
  echo "$key" > "$out.key"
  echo "image.sh: $name -> $out ($(du -h "$out" | cut -f1), $(( $(date +%s) - start )) s)" >&2
  echo "$out"
}

trap 'rm -rf "$cache"/images/rootfs.*' EXIT
for n in "${want[@]}"; do make_image "$n"; done
