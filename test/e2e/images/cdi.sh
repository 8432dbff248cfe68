#!/usr/bin/env bash
# CDI images: the archives testbed/cdi/image.sh writes are well formed and run, without a node.
#   - each archive: index.json names localhost/<name>:<version>; the manifest, config and layer blobs
#     match their digests and sizes; prints Entrypoint, User, WorkingDir;
#   - each unpacked root filesystem runs its entrypoint binary as the image's user (chroot, own mount and
#     PID namespaces): `--help` (cdi-apiserver: `--version` says the pinned version);
#   - controller: uid 1001 can write /tmp/ready and `cat` it (the operator's readiness probe);
#   - importer: a real `contentType: archive` import as the importer pod runs it (uid 107, /data a
#     volume, the controller's IMPORTER_* environment), from a tar served over http on the loopback of a
#     private network namespace: exit 0, the files land in /data with their content, and the image has
#     no qemu-img or nbdkit.
# Needs root, unshare, chroot, python3, ip. Builds (or reuses) the binaries and archives first.
# Usage: test/e2e/images/cdi.sh        (KEEP=1 keeps the work directory under /var/tmp)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
[ "$(id -u)" = 0 ] || fail "must run as root (namespaces, chroot)"
for t in unshare chroot python3 ip; do command -v "$t" >/dev/null || fail "missing $t"; done
# shellcheck source=testbed/cdi/versions.env
. "$repo/testbed/cdi/versions.env"

echo "== images"
mapfile -t archives < <("$repo/testbed/cdi/image.sh") || fail "testbed/cdi/image.sh"
[ "${#archives[@]}" = 5 ] || fail "expected 5 archives, got ${#archives[@]}"
W=$(mktemp -d /var/tmp/cdi-images.XXXXXX)
chmod 755 "$W"
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT

# in_image ROOTFS UID:GID CMD...: CMD in the root filesystem, new mount and PID namespaces, /proc mounted.
in_image() {
  local root=$1 user=$2; shift 2
  unshare --mount --pid --fork -- sh -ec 'r=$1 u=$2; shift 2; mount -t proc proc "$r/proc"
    exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin chroot --userspec="$u" "$r" "$@"' \
    in_image "$root" "$user" "$@"
}

for a in "${archives[@]}"; do
  n=$(basename "$a" .tar)
  mkdir -p "$W/$n/rootfs"
  # Checks the archive and unpacks its one layer; prints "Entrypoint|User|WorkingDir".
  info=$(python3 - "$a" "localhost/$n:$CDI_VERSION" "$W/$n/rootfs" <<'PY'
import hashlib, io, json, sys, tarfile
path, want, dest = sys.argv[1:]
t = tarfile.open(path)
names = set(t.getnames())
def blob(d):
    data = t.extractfile("blobs/sha256/" + d["digest"].split(":")[1]).read()
    assert "sha256:" + hashlib.sha256(data).hexdigest() == d["digest"], f"digest mismatch {d['digest']}"
    assert len(data) == d["size"], f"size mismatch {d['digest']}"
    return data
assert json.loads(t.extractfile("oci-layout").read()) == {"imageLayoutVersion": "1.0.0"}
index = json.loads(t.extractfile("index.json").read())
[m] = index["manifests"]
name = m["annotations"]["io.containerd.image.name"]
assert name == want, f"index.json names {name}, expected {want}"
manifest = json.loads(blob(m))
config = json.loads(blob(manifest["config"]))
[layer] = manifest["layers"]
data = blob(layer)
assert config["rootfs"]["diff_ids"][0] == "sha256:" + hashlib.sha256(__import__("gzip").decompress(data)).hexdigest()
with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as lt:
    try:
        lt.extractall(dest, numeric_owner=True, filter="fully_trusted")
    except TypeError:  # Python without extraction filters
        lt.extractall(dest, numeric_owner=True)
c = config["config"]
print(f"{name}: index {m['digest'][:19]} manifest {manifest['mediaType']} layer {layer['size']} B "
      f"({len(names)} entries)", file=sys.stderr)
print(json.dumps(c["Entrypoint"]), c["User"], c.get("WorkingDir", "-"), sep="|")
PY
) || fail "$n: archive check"
  IFS='|' read -r entry user workdir <<<"$info"
  pass "$n: index.json, manifest, config and layer digests match; Entrypoint $entry User $user WorkingDir $workdir"
  bin=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])[0])' "$entry")
  [ "$(stat -c '%a %u' "$W/$n/rootfs$bin")" = "755 0" ] || fail "$n: $bin is not root-owned 0755"
  [ "$user" = 1001 ] || fail "$n: user $user, upstream's is 1001"
  if [ "$n" = cdi-apiserver ]; then
    out=$(in_image "$W/$n/rootfs" 1001:0 "$bin" --version 2>&1) || fail "$n --version: $out"
    [ "$out" = "Containerized Data Importer $CDI_VERSION" ] || fail "$n --version said: $out"
    pass "$n: $bin --version as uid 1001: $out"
  fi
  out=$(in_image "$W/$n/rootfs" 1001:0 "$bin" --help 2>&1) || true   # flag's -help exits 0 or 2
  grep -q "^Usage of $bin:" <<<"$out" || fail "$n --help as uid 1001 said: $out"
  pass "$n: $bin --help as uid 1001 ($(grep -c '^  -' <<<"$out") flags)"
done

echo "== controller: the readiness probe's cat"
r="$W/cdi-controller/rootfs"
in_image "$r" 1001:0 sh -c 'echo ready > /tmp/ready && cat /tmp/ready' | grep -qx ready || fail "controller: cat /tmp/ready as uid 1001"
pass "cdi-controller: uid 1001 writes /tmp/ready and cat reads it"

echo "== importer: contentType archive over http, as the importer pod runs it"
r="$W/cdi-importer/rootfs"
for t in qemu-img nbdkit; do
  [ ! -e "$r/usr/bin/$t" ] || fail "importer: $t is in the image (not expected)"
done
for t in /usr/bin/tar /usr/bin/ln /usr/sbin/blockdev; do [ -x "$r$t" ] || fail "importer: no $t"; done
mkdir -p "$W/src/tree/sub" "$W/www" "$W/data"
echo "hello from the archive" > "$W/src/tree/hello.txt"
head -c 3000000 /dev/urandom > "$W/src/tree/sub/blob.bin"
tar -C "$W/src/tree" -cf "$W/www/seed.tar" .
chown 107:107 "$W/data"
: > "$r/dev/termination-log"; chown 107:107 "$r/dev/termination-log"
mkdir -p "$r/data"
start=$(date +%s)
set +e
unshare --mount --pid --net --fork -- sh -ec '
  W=$1 r=$2; ip link set lo up
  mount --bind "$W/data" "$r/data"; mount -t proc proc "$r/proc"
  python3 -m http.server 18480 --bind 127.0.0.1 --directory "$W/www" >"$W/http.log" 2>&1 &
  for i in $(seq 50); do python3 -c "import socket; socket.create_connection((\"127.0.0.1\", 18480), 1)" 2>/dev/null && break; sleep 0.1; done
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    IMPORTER_SOURCE=http IMPORTER_ENDPOINT=http://127.0.0.1:18480/seed.tar IMPORTER_CONTENTTYPE=archive \
    IMPORTER_IMAGE_SIZE=1Gi FILESYSTEM_OVERHEAD=0.055 PREALLOCATION=false OWNER_UID=test \
    chroot --userspec=107:107 "$r" /usr/bin/cdi-importer -alsologtostderr -v=1' cdi-import "$W" "$r" > "$W/importer.log" 2>&1
rc=$?
set -e
[ $rc = 0 ] || { tail -30 "$W/importer.log" >&2; fail "importer exited $rc"; }
if ! cmp -s "$W/src/tree/hello.txt" "$W/data/hello.txt" || ! cmp -s "$W/src/tree/sub/blob.bin" "$W/data/sub/blob.bin"; then
  ls -laR "$W/data" >&2; tail -30 "$W/importer.log" >&2; fail "importer: /data does not hold the archive's files"
fi
pass "cdi-importer: exit 0 in $(( $(date +%s) - start )) s, /data holds hello.txt and sub/blob.bin (3 MB) byte for byte, owner $(stat -c %u:%g "$W/data/hello.txt")"
echo "   termination message: $(cat "$r/dev/termination-log")"
sed 's/^/   /' "$W/importer.log" | head -20
echo "PASS: CDI $CDI_VERSION images"
