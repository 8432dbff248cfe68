#!/usr/bin/env bash
# real Pulp: the test bed's images run without a node. Builds (or reuses) the images with
# testbed/images/build.py, starts a Debian PostgreSQL on loopback, and runs each image's root
# filesystem as a container would (overlay root, own mount and PID namespaces, the image's uid):
#   pulp-minimal: the program's settings.py (components/settings/render.ts) and migration script
#     (components/migration/migrationJob.ts), then pulp-api, pulp-content and pulp-worker; status/ is 200
#     with the worker and content app online; readyz.py passes for api and content; SIGTERM stops each
#     PID 1 promptly.
#   pulp-web: nginx as uid 700 with the program's nginx.conf (components/web/nginx.ts) proxies status/.
#   redis: the program's command as uid 999 answers PING.
#   postgresql: as uid 26, the binaries CloudNativePG needs are on PATH; initdb, start, pg_controldata
#     and pg_basebackup work.
# Needs root, unshare, overlayfs, curl, node_modules (npm ci), and Debian's postgresql-15 on the host.
# Any missing tool fails the test. Usage: test/e2e/images/real-pulp.sh [--pulpcore VERSION]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
[ "$(id -u)" = 0 ] || fail "must run as root (namespaces, chroot)"
PGBIN=/usr/lib/postgresql/15/bin
for t in unshare nsenter chroot curl python3 "$PGBIN/initdb" "$PGBIN/pg_ctl" "$repo/node_modules/.bin/ts-node"; do
  command -v "$t" >/dev/null || fail "missing $t (apt-get install postgresql-15 curl util-linux; npm ci)"
done
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || fail "no overlayfs"

API_PORT=24817 CONTENT_PORT=24816 WEB_PORT=8080 PGPORT=${PGPORT:-55432} REDIS_PORT=${REDIS_PORT:-16379}
for p in $API_PORT $CONTENT_PORT $WEB_PORT $PGPORT $REDIS_PORT; do
  ! ss -ltn "sport = :$p" | grep -q LISTEN || fail "port $p is in use"
done

echo "== images"
metas=$(python3 "$repo/testbed/images/build.py" build --json "$@") || fail "image build"
meta() { python3 -c 'import json,sys; m={x["image"]:x for x in json.load(sys.stdin)}; print(m[sys.argv[1]][sys.argv[2]])' "$1" "$2" <<<"$metas"; }
for img in pulp-minimal pulp-web redis postgresql; do echo "$(meta "$img" name)  $(meta "$img" dir)"; done

W=$(mktemp -d /var/tmp/real-pulp.XXXXXX)
chmod 755 "$W"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  [ -f "$W/pg/postmaster.pid" ] && runuser -u postgres -- "$PGBIN/pg_ctl" -D "$W/pg" -m immediate stop >/dev/null 2>&1 || true
  wait 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT

# The image's config Env, one per line.
image_env() { python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["config"].get("Env", [])))' "$(meta "$1" dir)/image.json"; }

# run_image IMAGE NAME UID:GID [env K=V ...] -- CMD...: an overlay root over the image's rootfs in
# new mount and PID namespaces (CMD ends up as PID 1), host network. Upper dir: $W/NAME/upper (put
# files there first). $W/data is /var/lib/pulp in every pulp process. Prints nothing; runs in the
# background, pid of the unshare process in $W/NAME/unshare.pid.
run_image() {
  local img=$1 name=$2 user=$3; shift 3
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local d="$W/$name" lower; lower="$(meta "$img" dir)/rootfs"
  mkdir -p "$d/upper" "$d/work" "$d/root"
  mapfile -t ienv < <(image_env "$img")
  # The container's stdout/stderr: writable by its uid (nginx reopens /dev/stderr, as it can a pipe).
  : > "$d/log"; chmod 666 "$d/log"
  unshare --mount --pid --fork -- sh -ec '
    d=$1; lower=$2; user=$3; shift 3
    mount -t overlay overlay -o "lowerdir=$lower,upperdir=$d/upper,workdir=$d/work" "$d/root"
    mount -t proc proc "$d/root/proc"
    mount -t tmpfs -o mode=755 tmpfs "$d/root/dev"
    for n in null zero random urandom tty; do touch "$d/root/dev/$n"; mount --bind "/dev/$n" "$d/root/dev/$n"; done
    ln -s /proc/self/fd "$d/root/dev/fd"; ln -s fd/0 "$d/root/dev/stdin"
    ln -s fd/1 "$d/root/dev/stdout"; ln -s fd/2 "$d/root/dev/stderr"
    mkdir -p "$d/root/dev/shm" && mount -t tmpfs -o mode=1777 tmpfs "$d/root/dev/shm"
    if [ -d "$d/../data" ] && [ -d "$d/root/var/lib/pulp" ]; then mount --bind "$d/../data" "$d/root/var/lib/pulp"; fi
    exec chroot --userspec="$user" "$d/root" "$@"' run "$d" "$lower" "$user" \
    /usr/bin/env -i "${ienv[@]}" "${envs[@]}" "$@" > "$d/log" 2>&1 &
  echo $! > "$d/unshare.pid"; PIDS+=($!)
}
# The host pid of the container's PID 1 (the unshare process's child).
pid1() { local u; u=$(cat "$W/$1/unshare.pid"); for _ in $(seq 50); do pgrep -P "$u" && return 0; sleep 0.1; done; return 1; }
# exec_in NAME UID:GID CMD...: run a command in the running container's namespaces.
exec_in() {
  local name=$1 user=$2; shift 2; local p; p=$(pid1 "$name")
  local img; img=$(cat "$W/$name/image")
  mapfile -t ienv < <(image_env "$img")
  # A Pulp container's probes see the pod's env too (the secrets).
  [ "$img" = pulp-minimal ] && ienv+=("${secret_env[@]}")
  nsenter -t "$p" -m -p -- chroot --userspec="$user" "$W/$name/root" /usr/bin/env -i "${ienv[@]}" "$@"
}
# stop NAME: SIGTERM to PID 1, then the seconds until it exits (fails after 40 s).
stop_timed() {
  local name=$1 p u t0; p=$(pid1 "$name"); u=$(cat "$W/$name/unshare.pid"); t0=$(date +%s.%N)
  kill -TERM "$p"
  for _ in $(seq 400); do kill -0 "$u" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$u" 2>/dev/null && { tail -20 "$W/$name/log"; fail "$name did not exit 40 s after SIGTERM"; }
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)"
}
wait_http() { # URL SECONDS NAME
  for _ in $(seq "$2"); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 1; done
  tail -30 "$W/$3/log"; fail "$1 did not answer in $2 s"
}

echo "== PostgreSQL (host, Debian) on 127.0.0.1:$PGPORT"
mkdir -p "$W/pg" "$W/pgsock" && chown postgres "$W/pg" "$W/pgsock"
echo postgres-test > "$W/pgpw" && chown postgres "$W/pgpw"
runuser -u postgres -- "$PGBIN/initdb" -D "$W/pg" -A scram-sha-256 --pwfile="$W/pgpw" -U postgres >/dev/null
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$W/pg" -l "$W/pgsock/pg.log" -w \
  -o "-h 127.0.0.1 -p $PGPORT -k $W/pgsock" start >/dev/null
DBPASS=pulp-db-$RANDOM$RANDOM
PGPASSWORD=postgres-test "$PGBIN/psql" -h 127.0.0.1 -p "$PGPORT" -U postgres -q -v ON_ERROR_STOP=1 \
  -c "CREATE ROLE pulp LOGIN PASSWORD '$DBPASS'" -c "CREATE DATABASE pulp OWNER pulp" || fail "create role/database"
pass "database pulp, owner pulp (not a superuser: hstore must be creatable as a trusted extension)"

echo "== the program's settings.py, nginx.conf and migration script"
cd "$repo"
node_modules/.bin/ts-node -T -e '
const fs = require("fs");
const { renderSettings } = require("./components/settings/render");
const { renderNginxConf } = require("./components/web/nginx");
const { MIGRATE_SCRIPT } = require("./components/migration/migrationJob");
const [w, pgport] = process.argv.slice(1);
fs.writeFileSync(w + "/settings.py", renderSettings({
  contentOrigin: "http://127.0.0.1:8080", apiRoot: "/pulp/", contentPathPrefix: "/pulp/content/",
  allowedContentChecksums: ["sha224", "sha256", "sha384", "sha512"],
  database: { host: "127.0.0.1", port: Number(pgport), name: "pulp", user: "pulp", sslmode: "prefer" },
  cacheEnabled: false, workerType: "pulpcore",
  // runtime.md #7: the image collects static files here (pulp-operator STATIC_ROOT).
  extra: { STATIC_ROOT: "/var/lib/operator/static/" },
}));
fs.writeFileSync(w + "/nginx.conf", renderNginxConf({ apiHost: "127.0.0.1", apiPort: 24817,
  contentHost: "127.0.0.1", contentPort: 24816, contentPathPrefix: "/pulp/content/", clientMaxBodySize: "10g" }));
fs.writeFileSync(w + "/migrate.sh", MIGRATE_SCRIPT);
' "$W" "$PGPORT"
pass "rendered ($(wc -l < "$W/settings.py") settings lines)"

mkdir -p "$W/data"; chown 700:700 "$W/data"
# The init-dirs container's work (components/workload/pulpProcess.ts).
setpriv --reuid 700 --regid 700 --clear-groups mkdir -p "$W/data/media" "$W/data/assets" "$W/data/tmp"
secret_env=(PULP_SECRET_KEY="$(python3 -c 'import secrets; print(secrets.token_urlsafe(40))')"
  PULP_DATABASES__default__PASSWORD="$DBPASS")
prep_pulp() { # NAME: the settings and key in the container's upper dir, as the program mounts them
  local u="$W/$1/upper/etc/pulp"; mkdir -p "$u/keys"
  install -m 0440 -o 0 -g 700 "$W/settings.py" "$u/settings.py"
  install -m 0440 -o 0 -g 700 "$W/db.key" "$u/keys/database_fields.symmetric.key"
  echo pulp-minimal > "$W/$1/image"
}
python3 -c 'import base64,os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())' > "$W/db.key"

echo "== migrate (the program's migration Job script, as uid 700)"
prep_pulp migrate
t0=$(date +%s)
run_image pulp-minimal migrate 700:700 "${secret_env[@]}" ADMIN_PASSWORD=admin-test-pw -- /bin/sh -c "$(cat "$W/migrate.sh")"
wait "$(cat "$W/migrate/unshare.pid")" || { tail -40 "$W/migrate/log"; fail "migration"; }
grep -q "Successfully set password" "$W/migrate/log" || { tail -20 "$W/migrate/log"; fail "reset-admin-password"; }
pass "migrate + reset-admin-password in $(( $(date +%s) - t0 )) s"

echo "== pulp-api, pulp-content, pulp-worker"
for proc in api content worker; do
  prep_pulp "$proc"; run_image pulp-minimal "$proc" 700:700 "${secret_env[@]}" -- "/usr/bin/pulp-$proc"
done
t0=$(date +%s)
wait_http "http://127.0.0.1:$API_PORT/pulp/api/v3/status/" 300 api
status_json=""
for _ in $(seq 120); do
  status_json=$(curl -fsS "http://127.0.0.1:$API_PORT/pulp/api/v3/status/")
  python3 -c 'import json,sys; s=json.loads(sys.argv[1]); sys.exit(0 if s["online_workers"] and s["online_content_apps"] and s["database_connection"]["connected"] else 1)' "$status_json" && break
  sleep 1
done
python3 - "$status_json" <<'PY' || fail "status/ lacks an online worker or content app"
import json, sys
s = json.loads(sys.argv[1])
assert s["database_connection"]["connected"], s
assert s["online_workers"], "no online worker"
assert s["online_content_apps"], "no online content app"
print("versions:", ", ".join(f'{v["component"]} {v["version"]}' for v in s["versions"]))
print("workers:", [w["name"] for w in s["online_workers"]], "content apps:", [a["name"] for a in s["online_content_apps"]])
PY
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$API_PORT/pulp/api/v3/status/")
[ "$code" = 200 ] || fail "status/ answered $code"
pass "GET /pulp/api/v3/status/ 200, worker and content app online ($(( $(date +%s) - t0 )) s after start)"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$CONTENT_PORT/pulp/content/")
[ "$code" = 200 ] || fail "content /pulp/content/ answered $code"
pass "content app /pulp/content/ 200"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$API_PORT/assets/rest_framework/css/bootstrap.min.css")
[ "$code" = 200 ] || fail "static file from /var/lib/operator/static/ answered $code"
pass "static files served from STATIC_ROOT=/var/lib/operator/static/"
exec_in api 700:700 /usr/bin/readyz.py /pulp/api/v3/status/ >/dev/null || fail "readyz.py in api"
exec_in content 700:700 /usr/bin/readyz.py /pulp/content/ >/dev/null || fail "readyz.py in content"
exec_in worker 700:700 /usr/bin/readyz.py /pulp/content/ >/dev/null 2>&1 && fail "readyz.py passes in the worker"
exec_in worker 700:700 /usr/bin/wait_on_postgres.py >/dev/null || fail "wait_on_postgres.py (worker readiness)"
pass "readyz.py: api and content ready, worker not; wait_on_postgres.py ok"
for proc in api content worker; do
  grep -q . <(exec_in "$proc" 700:700 cat /proc/1/cmdline | tr '\0' ' ' | grep "pulpcore-$proc") \
    || fail "PID 1 of $proc is not pulpcore-$proc"
done
pass "PID 1 is pulpcore-api / pulpcore-content / pulpcore-worker (exec'd by the entry scripts)"

echo "== pulp-web (nginx as uid 700, the program's nginx.conf)"
mkdir -p "$W/web/upper/etc/nginx"; install -m 0444 "$W/nginx.conf" "$W/web/upper/etc/nginx/nginx.conf"
echo pulp-web > "$W/web/image"
run_image pulp-web web 700:700 -- nginx -g "daemon off;"
wait_http "http://127.0.0.1:$WEB_PORT/healthz" 30 web
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$WEB_PORT/pulp/api/v3/status/")
[ "$code" = 200 ] || { tail "$W/web/log"; fail "status/ through nginx answered $code"; }
exec_in web 700:700 sh -c 'ls /opt/app-root/etc/nginx.default.d/' | tr '\n' ' '; echo
pass "nginx as uid 700 serves /healthz and proxies status/ (200)"
echo "web stopped (SIGQUIT is the image's StopSignal; SIGTERM here) in $(stop_timed web) s"

echo "== SIGTERM to each Pulp PID 1"
for proc in worker content api; do
  s=$(stop_timed "$proc")
  python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 15 else 1)" "$s" || fail "$proc took $s s to stop"
  pass "$proc exited $s s after SIGTERM"
done

echo "== redis (the program's command, uid 999)"
echo redis > "$W/redis/image" 2>/dev/null || { mkdir -p "$W/redis"; echo redis > "$W/redis/image"; }
run_image redis redis 999:999 -- sh -c "cd /data && exec redis-server --save '' --appendonly no --port $REDIS_PORT"
for _ in $(seq 50); do exec_in redis 999:999 redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.2; done
exec_in redis 999:999 redis-cli -p "$REDIS_PORT" ping | grep -q PONG || { cat "$W/redis/log"; fail "redis PING"; }
[ "$(exec_in redis 999:999 id -u)" = 999 ] || fail "redis uid"
pass "redis-server as uid 999 answers PONG; stopped in $(stop_timed redis) s"

echo "== postgresql (CloudNativePG operand layout, uid 26)"
mkdir -p "$W/pgimg"; echo postgresql > "$W/pgimg/image"
run_image postgresql pgimg 26 -- sh -ec '
  for b in initdb postgres pg_ctl pg_controldata pg_basebackup du; do echo "$b: $(command -v $b)"; done
  id
  initdb -D /tmp/pgdata -E UTF8 --locale=C.UTF-8 >/dev/null
  pg_ctl -D /tmp/pgdata -o "-k /tmp -h \"\" -p 25432" -w -l /tmp/pg.log start >/dev/null
  pg_controldata /tmp/pgdata | grep -E "cluster state"
  pg_basebackup -h /tmp -p 25432 -D /tmp/backup -X stream >/dev/null && echo "pg_basebackup ok"
  pg_ctl -D /tmp/pgdata -w stop >/dev/null'
wait "$(cat "$W/pgimg/unshare.pid")" || { cat "$W/pgimg/log"; fail "postgresql image"; }
cat "$W/pgimg/log"
grep -q "^initdb: /usr/lib/postgresql/15/bin/initdb" "$W/pgimg/log" || fail "initdb is not the server's binary"
grep -q "uid=26(postgres)" "$W/pgimg/log" || fail "uid 26 is not postgres"
grep -q "in production" "$W/pgimg/log" && grep -q "pg_basebackup ok" "$W/pgimg/log" || fail "postgresql image"
pass "initdb, pg_ctl, postgres, pg_controldata, pg_basebackup as uid 26"
echo "PASS: real Pulp on the test bed's images"
