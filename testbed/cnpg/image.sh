#!/usr/bin/env bash
# Makes the operator image localhost/cloudnative-pg:<version> as an OCI archive for
# `ctr -n k8s.io images import`, laid out like the upstream image (the module's Dockerfile: distroless
# static-debian12:nonroot, the binary under /operator/ and a /manager link to it, /licenses, USER
# 65532, ENTRYPOINT /manager). What the operator uses from the distroless base is kept: /etc/passwd and
# /etc/group with nonroot, /tmp (1777), the CA bundle and zoneinfo (copied from this machine's Debian
# ca-certificates and tzdata packages). The manager is also copied into every PostgreSQL pod by the
# `bootstrap-controller` init container (`/manager bootstrap /controller/manager`), which runs as uid 26:
# it must be world-readable and executable.
#
# Writes ${CNPG_CACHE:-~/.cache/pulp-pulumi-cnpg}/<version>/cloudnative-pg.tar; prints its path.
# The archive writer is the images engineer's testbed/images/oci.py (OCI_WRITER overrides).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
. "$here/versions.env"
writer="${OCI_WRITER:-$repo/testbed/images/oci.py}"
[ -f "$writer" ] || { echo "image.sh: no OCI archive writer at $writer (set OCI_WRITER)" >&2; exit 1; }
cache="${CNPG_CACHE:-$HOME/.cache/pulp-pulumi-cnpg}/$CNPG_VERSION"
manager="$("$here/build.sh")"
name="localhost/cloudnative-pg:${CNPG_VERSION#v}"
out="$cache/cloudnative-pg.tar"
key="$( { sha256sum "$manager" "$here/image.sh" "$writer" | cut -d' ' -f1; echo "$name";
  dpkg-query -W -f='${Package} ${Version}\n' ca-certificates tzdata; } | sha256sum | cut -c1-16)"
if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then echo "$out"; exit 0; fi
root="$(mktemp -d "$cache/rootfs.XXXXXX")"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{operator,licenses,etc/ssl/certs,usr/share,tmp,home/nonroot,dev,proc,sys,run}
chmod 1777 "$root/tmp"; chown 65532:65532 "$root/home/nonroot"; chmod 0755 "$root"
install -m 0755 -o 65532 -g 65532 "$manager" "$root/operator/manager_amd64"
ln -s operator/manager_amd64 "$root/manager"
mod="$(go env GOMODCACHE)/github.com/cloudnative-pg/cloudnative-pg@$CNPG_VERSION"
cp -r "$mod/licenses/." "$root/licenses/" 2>/dev/null || true
cp "$mod/LICENSE" "$root/licenses/LICENSE"
chmod -R u+w,a+rX "$root/licenses"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' > "$root/etc/group"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
cp -r /usr/share/zoneinfo "$root/usr/share/zoneinfo"
cat > "$root/config.json.tmp" <<JSON
{"Entrypoint": ["/manager"], "User": "65532:65532", "WorkingDir": "/",
 "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"],
 "Labels": {"org.opencontainers.image.version": "${CNPG_VERSION#v}", "org.opencontainers.image.revision": "$CNPG_COMMIT",
            "org.opencontainers.image.source": "https://github.com/cloudnative-pg/cloudnative-pg"}}
JSON
mv "$root/config.json.tmp" "$cache/image-config.json"
python3 "$writer" write --rootfs "$root" --name "$name" --out "$out" --config-json "$cache/image-config.json" > "$cache/image-digests.json"
echo "$key" > "$out.key"
echo "image.sh: $name -> $out ($(du -h "$out" | cut -f1))" >&2
echo "$out"
