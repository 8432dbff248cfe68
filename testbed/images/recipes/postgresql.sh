# shellcheck shell=bash
# postgresql: laid out like CloudNativePG's operand images (cloudnative-pg/postgres-containers,
# "minimal"): Debian's PostgreSQL with no cluster created, the server's bin dir on PATH (first, so
# initdb/pg_ctl/postgres/pg_controldata/pg_basebackup are the real binaries, not pg_wrapper), user
# postgres moved to uid 26, USER 26, no entrypoint (the operator runs its instance manager). Bookworm
# ships PostgreSQL 15. Also pgaudit (optional in CNPG's requirements). Locale: C and C.UTF-8 (glibc).
. "$HERE/recipes/lib.sh"
major=15
apt_install "$ROOTFS" postgresql-common
sed -ri 's/^#?\s*create_main_cluster\s*=.*$/create_main_cluster = false/' "$ROOTFS/etc/postgresql-common/createcluster.conf"
grep -q '^create_main_cluster = false' "$ROOTFS/etc/postgresql-common/createcluster.conf"
apt_install "$ROOTFS" "postgresql-$major" "postgresql-$major-pgaudit" libsasl2-modules libldap-common
in_root "$ROOTFS" sh -ec 'old=$(id -u postgres); usermod -u 26 postgres
  find / -xdev -uid "$old" -exec chown -h 26 {} +'
version=$(in_root "$ROOTFS" dpkg-query -W -f '${Version}' "postgresql-$major")
clean_root "$ROOTFS"
python3 - "$version" "$major" > "$OUT/image.json" <<'PY'
import json, sys
v, major = sys.argv[1], sys.argv[2]
print(json.dumps({"tag": major, "config": {
    "Env": [f"PATH=/usr/lib/postgresql/{major}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LANG=C.UTF-8"],
    "User": "26", "ExposedPorts": {"5432/tcp": {}},
    "Labels": {f"org.debian.package.postgresql-{major}": v, "org.opencontainers.image.version": v}}}))
PY
