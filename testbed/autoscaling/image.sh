#!/usr/bin/env bash
# Makes the images of KEDA's operator, KEDA's metrics adapter and metrics-server as OCI archives for
# `ctr -n k8s.io images import`, laid out like their upstream distroless images: one static binary at /,
# /etc/passwd with nonroot (65532), /tmp (1777), the CA bundle from this machine's Debian
# ca-certificates, the module's LICENSE. Names: localhost/keda:<v>, localhost/keda-metrics-apiserver:<v>,
# localhost/metrics-server:<v>. Writes them under ${AUTOSCALING_CACHE:-~/.cache/pulp-pulumi-autoscaling};
# prints the three archives' paths. The archive writer is testbed/images/oci.py (OCI_WRITER overrides).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"
writer="${OCI_WRITER:-$repo/testbed/images/oci.py}"
[ -f "$writer" ] || { echo "image.sh: no OCI archive writer at $writer (set OCI_WRITER)" >&2; exit 1; }
cache="${AUTOSCALING_CACHE:-$HOME/.cache/pulp-pulumi-autoscaling}"
mapfile -t binaries < <("$here/build.sh")
export GOTOOLCHAIN=local

# image <binary> <name> <module@version> <archive>
image() {
  local binary="$1" name="$2" module="$3" out="$4" key root licence
  key="$( { sha256sum "$binary" "$here/image.sh" "$writer" | cut -d' ' -f1; echo "$name";
    dpkg-query -W -f='${Package} ${Version}\n' ca-certificates; } | sha256sum | cut -c1-16)"
  if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then echo "$out"; return 0; fi
  root="$(mktemp -d "$cache/rootfs.XXXXXX")"
  mkdir -p "$root"/{licenses,etc/ssl/certs,tmp,home/nonroot,dev,proc,sys,run}
  chmod 1777 "$root/tmp"; chown 65532:65532 "$root/home/nonroot"; chmod 0755 "$root"
  install -m 0755 "$binary" "$root/$(basename "$binary")"
  licence="$(go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')/LICENSE"
  install -m 0644 "$licence" "$root/licenses/LICENSE"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$root/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "$root/etc/group"
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  cat > "$out.config.json" <<JSON
{"Entrypoint": ["/$(basename "$binary")"], "User": "65532:65532", "WorkingDir": "/",
 "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
 "Labels": {"org.opencontainers.image.source": "https://$module"}}
JSON
  python3 "$writer" write --rootfs "$root" --name "$name" --out "$out" --config-json "$out.config.json" > /dev/null
  rm -rf "$root"
  echo "$key" > "$out.key"
  echo "image.sh: $name -> $out ($(du -h "$out" | cut -f1))" >&2
  echo "$out"
}

image "${binaries[0]}" "localhost/keda:${KEDA_VERSION#v}" "github.com/kedacore/keda/v2@$KEDA_VERSION" "$cache/keda.tar"
image "${binaries[1]}" "localhost/keda-metrics-apiserver:${KEDA_VERSION#v}" "github.com/kedacore/keda/v2@$KEDA_VERSION" "$cache/keda-metrics-apiserver.tar"
image "${binaries[2]}" "localhost/metrics-server:${METRICS_SERVER_VERSION#v}" "sigs.k8s.io/metrics-server@$METRICS_SERVER_VERSION" "$cache/metrics-server.tar"
