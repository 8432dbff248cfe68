# shellcheck shell=bash
# postgresql-17: the image a CloudNativePG cluster of localhost/postgresql:15 is upgraded to in place
# (`localhost/postgresql:17`, tagged by major as CNPG parses it). Laid out as recipes/postgresql.sh lays
# out 15, from trixie's PostgreSQL 17. The operator's major-upgrade Job copies the old image's bin, lib and
# share dirs into this one and runs pg_upgrade here with both, so the old (bookworm) binaries must find
# their libraries in this image too: bookworm's libicu72 and libldap-2.5-0, which trixie replaced (ICU 76,
# libldap2); every other library they need is in trixie under the same soname.
. "$HERE/recipes/lib.sh"
major=17
apt_install "$ROOTFS" postgresql-common
sed -ri 's/^#?\s*create_main_cluster\s*=.*$/create_main_cluster = false/' "$ROOTFS/etc/postgresql-common/createcluster.conf"
grep -q '^create_main_cluster = false' "$ROOTFS/etc/postgresql-common/createcluster.conf"
apt_install "$ROOTFS" "postgresql-$major" "postgresql-$major-pgaudit" libsasl2-modules libldap-common
echo "deb http://deb.debian.org/debian bookworm main" > "$ROOTFS/etc/apt/sources.list.d/bookworm.list"
apt_install "$ROOTFS" libicu72 libldap-2.5-0
rm "$ROOTFS/etc/apt/sources.list.d/bookworm.list"
in_root "$ROOTFS" sh -ec 'old=$(id -u postgres); usermod -u 26 postgres
  find / -xdev -uid "$old" -exec chown -h 26 {} +'
version=$(in_root "$ROOTFS" dpkg-query -W -f '${Version}' "postgresql-$major")
clean_root "$ROOTFS"
python3 - "$version" "$major" > "$OUT/image.json" <<'PY'
import json, sys
v, major = sys.argv[1], sys.argv[2]
print(json.dumps({"repository": "postgresql", "tag": major, "config": {
    "Env": [f"PATH=/usr/lib/postgresql/{major}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LANG=C.UTF-8"],
    "User": "26", "ExposedPorts": {"5432/tcp": {}},
    "Labels": {f"org.debian.package.postgresql-{major}": v, "org.opencontainers.image.version": v}}}))
PY
