# shellcheck shell=bash
# pgbouncer: laid out like CloudNativePG's PgBouncer image (cloudnative-pg/pgbouncer-containers): the
# binary at /usr/bin/pgbouncer (the Pooler pod's `/controller/manager pgbouncer run` execs it by that
# path; Debian installs it in /usr/sbin), user pgbouncer 998:996 (the ids the operator runs the pod as;
# pgbouncer's `peer` rule for its admin console maps the uid to that name), psql, USER 998. Debian
# trixie's pgbouncer (1.24): bookworm's 1.18 lacks `auth_dbname`, which the operator writes.
. "$HERE/recipes/lib.sh"
in_root "$ROOTFS" sh -ec 'groupadd -r -g 996 pgbouncer; useradd -r -u 998 -g 996 -d /var/run/pgbouncer -s /usr/sbin/nologin pgbouncer'
apt_install "$ROOTFS" pgbouncer postgresql-client
ln -s ../sbin/pgbouncer "$ROOTFS/usr/bin/pgbouncer"
# Inside the chroot: /var/run is an absolute link to /run, which from out here is the build host's.
in_root "$ROOTFS" sh -ec 'mkdir -p /run/pgbouncer /var/log/pgbouncer; chown 998:996 /run/pgbouncer /var/log/pgbouncer
  test -x /usr/bin/pgbouncer; /usr/bin/pgbouncer --version'
version=$(in_root "$ROOTFS" dpkg-query -W -f '${Version}' pgbouncer)
clean_root "$ROOTFS"
PYTHONPATH="$HERE" python3 - "$version" > "$OUT/image.json" <<'PY'
import json, sys, build
v = sys.argv[1]
print(json.dumps({"tag": build.debian_tag(v), "config": {
    "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"],
    "User": "998:996", "WorkingDir": "/", "ExposedPorts": {"5432/tcp": {}},
    "Labels": {"org.debian.package.pgbouncer": v, "org.opencontainers.image.version": v}}}))
PY
