# shellcheck shell=bash
# redis: Debian's redis-server, run as redis 999:999 (the uid components/redis/redis.ts sets, the one
# of the official redis images), in /data, with no persistence unless told.
. "$HERE/recipes/lib.sh"
in_root "$ROOTFS" sh -ec 'groupadd -r -g 999 redis; useradd -r -u 999 -g 999 -d /var/lib/redis -s /usr/sbin/nologin redis'
apt_install "$ROOTFS" redis-server
mkdir -p "$ROOTFS/data" && chown 999:999 "$ROOTFS/data"
version=$(in_root "$ROOTFS" dpkg-query -W -f '${Version}' redis-server)
clean_root "$ROOTFS"
PYTHONPATH="$HERE" python3 - "$version" > "$OUT/image.json" <<'PY'
import json, sys, build
v = sys.argv[1]
print(json.dumps({"tag": build.debian_tag(v), "config": {
    "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"],
    "Cmd": ["redis-server", "--save", "", "--appendonly", "no"],
    "User": "999:999", "WorkingDir": "/data", "ExposedPorts": {"6379/tcp": {}},
    "Labels": {"org.debian.package.redis-server": v, "org.opencontainers.image.version": v}}}))
PY
