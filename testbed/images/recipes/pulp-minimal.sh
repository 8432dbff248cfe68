# shellcheck shell=bash
# pulp-minimal: pulpcore and the plugins of upstream's pulp-minimal, from the hash lock
# ($LOCK_FILE = locks/pulpcore-<version>.txt) into Debian's Python 3.11, with the entry scripts in
# pulp/bin, user pulp 700:700 (HOME /var/lib/pulp), static files collected into
# /var/lib/operator/static/, and the component versions in /etc/pulp/versions.json and a label.
. "$HERE/recipes/lib.sh"
R=$ROOTFS
# libglib2.0-0: the createrepo_c wheel (pulp-rpm) links libglib/libgobject from the system; rpm-common:
# its /usr/lib/rpm/rpmrc; git: pulp_ansible imports GitPython, which needs the executable; gpg and
# gpg-agent: the signing services' scripts (upstream's image has GnuPG too); python3-ldap: LDAP login
# (pulp/ldap.txt).
apt_install "$R" python3-pip libglib2.0-0 rpm-common git gpg gpg-agent python3-ldap
in_root "$R" sh -ec 'groupadd -r -g 700 pulp; useradd -r -u 700 -g 700 -d /var/lib/pulp -s /bin/bash pulp'
cp "$LOCK_FILE" "$R/tmp/requirements.txt"
# --no-deps: the lock is complete; --require-hashes: every file is the one locked. A few locked
# packages are source only (pure Python, e.g. drf-access-policy): pip builds those.
in_root "$R" pip install -q --no-cache-dir --break-system-packages --no-deps --require-hashes \
  --prefer-binary -r /tmp/requirements.txt
cp "$HERE/pulp/ldap.txt" "$R/tmp/ldap.txt"
in_root "$R" pip install -q --no-cache-dir --break-system-packages --no-deps --require-hashes -r /tmp/ldap.txt
in_root "$R" python3 -c 'import ldap, django_auth_ldap.backend'
# pulpcore's own console script `pulp-content` would shadow /usr/bin/pulp-content on PATH.
rm -f "$R/usr/local/bin/pulp-content"
for f in "$HERE"/pulp/bin/*; do install -m 0755 "$f" "$R/usr/bin/$(basename "$f")"; done
mkdir -p "$R"/etc/pulp/keys "$R"/var/lib/operator/static "$R"/var/lib/pulp/{media,tmp,assets,scripts}
chown -R 700:700 "$R/var/lib/pulp" "$R/var/lib/operator/static"
# Build-time settings only: nothing of them stays in the image (the throwaway key is in /tmp, which
# clean_root empties).
python3 -c 'import base64,os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())' > "$R/tmp/build.key"
build_env=(env PULP_SECRET_KEY=build-only-not-a-secret PULP_CONTENT_ORIGIN=http://localhost
  PULP_STATIC_ROOT=/var/lib/operator/static/ PULP_SETTINGS=/nonexistent/settings.py
  PULP_DB_ENCRYPTION_KEY=/tmp/build.key)
in_root "$R" "${build_env[@]}" runuser -u pulp -- /usr/local/bin/pulpcore-manager collectstatic --clear --noinput --link -v 0
in_root "$R" "${build_env[@]}" /usr/local/bin/pulpcore-manager shell -c '
import json
from pulpcore.app.apps import pulp_plugin_configs
v = {a.label: a.version for a in pulp_plugin_configs()}
open("/etc/pulp/versions.json", "w").write(json.dumps(v, sort_keys=True) + "\n")'
test "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["core"])' "$R/etc/pulp/versions.json")" = "$PULPCORE_VERSION"
# Hash-based .pyc files: the archive fixes every mtime, which would make timestamp-based ones stale.
in_root "$R" python3 -m compileall -q -f -j 2 --invalidation-mode unchecked-hash \
  /usr/lib/python3.11 /usr/lib/python3/dist-packages /usr/local/lib/python3.11/dist-packages >/dev/null || true
clean_root "$R"
PYTHONPATH="$HERE" python3 - "$R/etc/pulp/versions.json" > "$OUT/image.json" <<'PY'
import json, os, sys
versions = open(sys.argv[1]).read().strip()
core = json.loads(versions)["core"]
print(json.dumps({"tag": core, "config": {
    "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
            "PYTHONUNBUFFERED=1", "DJANGO_SETTINGS_MODULE=pulpcore.app.settings",
            "PULP_SETTINGS=/etc/pulp/settings.py", "PULP_GUNICORN_TIMEOUT=90",
            "PULP_API_WORKERS=2", "PULP_CONTENT_WORKERS=2"],
    "Cmd": ["/usr/bin/pulp-api"], "User": "700:700", "WorkingDir": "/var/lib/pulp",
    "ExposedPorts": {"24816/tcp": {}, "24817/tcp": {}},
    "Labels": {"org.pulpproject.versions": versions, "org.opencontainers.image.version": core}}}))
PY
