"""
What the migration Job runs before `migrate`, with Pulp's interpreter and its PostgreSQL driver but without
Pulp's settings: releases 3.86.0-3.104.x (and LTS patches below 3.49.55, 3.63.32, 3.73.28, 3.85.13) refuse
to load their settings while artifacts lack a newly allowed checksum, for every command but migrate and
handle-artifact-checksums (pulpcore/app/settings.py@3.85.0), so anything that loads them first (the
image's wait_on_postgres.py, `pulpcore-manager shell`) would stop a change of allowedContentChecksums.
The connection comes from the rendered settings.py (literals only, components/settings/render.ts) and
the password from the Job's env.

1. Waits until PostgreSQL answers a query.
2. --clear-stale-appstatus: deletes AppStatus rows past their TTL (pulpcore 3.91's pre-migrate cleanup).
3. Refuses a database migrated by a newer release than the image: an app (pulpcore's core, file and
   certguard, a plugin) with an applied migration numbered above the newest the image ships. Such a
   database reaches this Job when the release it records is not the one it runs (a takeover of pulp-operator's
   install planned from its image's tag, a history recorded by hand); `migrate` would pass it over silently.
4. Refuses a database whose encrypted fields (remote credentials) the install's key cannot read: another
   install wrote them (a database taken over without its key), and every sync would fail on them.
5. Looks for INVALID indexes (pg_index.indisvalid = false), which an interrupted CREATE INDEX CONCURRENTLY
   leaves behind and which make the migration that builds them fail on every retry ("already exists").
   Those a known non-atomic migration builds are dropped while that migration is not recorded as applied;
   any other stops the Job, naming the statement to run.
"""

import importlib.util
import os
import re
import sys
import time

# Index name -> the non-atomic migration (AddIndexConcurrently, atomic = False) that builds it.
CONCURRENT_INDEXES = {
    "pulp_labels_gin_index": ("core", "0147_content_pulp_labels_gin"),  # pulpcore 3.106.0
    "artifact_domain_size_index": ("core", "0148_artifact_artifact_domain_size_index"),  # 3.106.0
}

INVALID_INDEXES = """
SELECT n.nspname, i.relname, t.relname,
       EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = x.indexrelid)
FROM pg_index x
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace n ON n.oid = i.relnamespace
WHERE NOT x.indisvalid AND n.nspname = current_schema()
ORDER BY i.relname
"""


def password(env):
    """The Job's SECRET_ variable, else dynaconf's PULP_ one (its "@str " marker dropped)."""
    given = env.get("SECRET_DATABASES__default__PASSWORD")
    if given:
        return given
    given = env.get("PULP_DATABASES__default__PASSWORD", "")
    return given[len("@str "):] if given.startswith("@str ") else given


def read_settings(settings_path):
    values = {}
    with open(settings_path) as f:
        exec(compile(f.read(), settings_path, "exec"), values)
    return values


def connection_args(settings, env):
    db = settings["DATABASES"]["default"]
    args = {
        "host": db.get("HOST"),
        "port": db.get("PORT"),
        "dbname": db.get("NAME"),
        "user": db.get("USER"),
        "password": password(env) or db.get("PASSWORD"),
        **(db.get("OPTIONS") or {}),
    }
    return {k: v for k, v in args.items() if v not in (None, "")}


def driver():
    try:
        import psycopg

        return psycopg
    except ImportError:  # releases before psycopg 3
        import psycopg2

        return psycopg2


def wait(db, args, interval=2):
    while True:
        try:
            conn = db.connect(**{"connect_timeout": 10, **args})  # the settings may set their own
            conn.autocommit = True  # DROP INDEX CONCURRENTLY cannot run in a transaction
            conn.cursor().execute("SELECT 1")
            return conn
        except db.OperationalError as e:
            where = f"{args.get('host', 'localhost')}:{args.get('port', 5432)}"
            # A refusal that waiting does not change: fail now, not at the Job's timeout hours later.
            if any(m in str(e) for m in ("authentication failed", "does not exist", "no pg_hba.conf entry")):
                raise SystemExit(f"PostgreSQL at {where} refused the connection: {str(e).strip()}")
            print(f"Waiting for PostgreSQL at {where}: {str(e).strip()}", flush=True)
            time.sleep(interval)


def table_exists(cur, table):
    cur.execute(f"SELECT to_regclass('{table}') IS NOT NULL")
    return cur.fetchone()[0]


def clear_stale_appstatus(cur):
    if table_exists(cur, "core_appstatus"):
        cur.execute("DELETE FROM core_appstatus WHERE last_heartbeat < now() - ttl")
        print("AppStatus rows past their TTL deleted:", cur.rowcount, flush=True)


def has_migrations(cur):
    """Whether Django has recorded migrations here (an empty database has no django_migrations)."""
    return table_exists(cur, "django_migrations")


def applied(cur, app, name):
    if not has_migrations(cur):
        return False
    cur.execute("SELECT 1 FROM django_migrations WHERE app = %s AND name = %s", (app, name))
    return cur.fetchone() is not None


# App label -> the package whose app/migrations holds its migrations (pulpcore ships core, file and
# certguard; galaxy_ng's label is galaxy); else pulp_<label>. Django's own apps find no package.
PACKAGES = {"core": "pulpcore", "file": "pulp_file", "certguard": "pulp_certguard", "galaxy": "galaxy_ng"}
NUMBERED = re.compile(r"^(\d{4})_\w+$")


def newest_in_image(app):
    """The highest-numbered migration the image ships for the app; None without its package."""
    # A top-level find_spec locates the package without importing it (nothing loads Pulp's settings).
    spec = importlib.util.find_spec(PACKAGES.get(app, "pulp_" + app))
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = os.path.join(location, "app", "migrations")
        names = [f[:-3] for f in os.listdir(folder) if f.endswith(".py")] if os.path.isdir(folder) else []
        numbered = [n for n in names if NUMBERED.match(n)]
        if numbered:
            return max(numbered)
    return None


def newer_than_image(cur):
    """A line per app whose database holds a migration numbered above any the image ships."""
    if not has_migrations(cur):
        return []
    cur.execute("SELECT app, name FROM django_migrations")
    newest = {}
    for app, name in cur.fetchall():
        if NUMBERED.match(name) and name > newest.get(app, ""):
            newest[app] = name
    problems = []
    for app, name in sorted(newest.items()):
        shipped = newest_in_image(app)
        if shipped and name[:4] > shipped[:4]:
            problems.append(f"{app}: the database has {name}, the image's newest is {shipped}")
    return problems


# Remote credentials, pulpcore's EncryptedTextFields (app/models/repository.py Remote): Fernet tokens.
ENCRYPTED_REMOTE_FIELDS = ("password", "username", "client_key", "proxy_password", "proxy_username")


def unreadable_fields(cur, key_path):
    """Whether the newest encrypted remote credential cannot be read with any key of the key file."""
    if not table_exists(cur, "core_remote"):
        return False
    value = "COALESCE(" + ", ".join(ENCRYPTED_REMOTE_FIELDS) + ")"
    cur.execute(f"SELECT {value} FROM core_remote WHERE {value} IS NOT NULL ORDER BY pulp_created DESC LIMIT 1")
    row = cur.fetchone()
    if not row:
        return False
    from cryptography.fernet import Fernet, InvalidToken, MultiFernet

    with open(key_path, "rb") as f:  # one key a line, the first encrypts (pulpcore app/models/fields.py)
        keys = [Fernet(k.strip()) for k in f if k.strip() and not k.startswith(b"#")]
    try:
        MultiFernet(keys).decrypt(row[0].encode())
        return False
    except InvalidToken:
        return True


def quoted(*names):
    return ".".join('"' + n.replace('"', '""') + '"' for n in names)


def repair_invalid_indexes(cur):
    """Drops the known leftovers; returns a line per invalid index left for a person to look at."""
    cur.execute(INVALID_INDEXES)
    problems = []
    for schema, index, table, building in cur.fetchall():
        known = CONCURRENT_INDEXES.get(index)
        if building:
            problems.append(f"{index} on {table} is being built right now by another session")
        elif known and not applied(cur, *known):
            cur.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {quoted(schema, index)}")
            print(f"Dropped INVALID index {index} on {table}, left by an interrupted "
                  f"{known[0]}.{known[1]}, which builds it again", flush=True)
        elif known:  # its migration is recorded: rebuild it rather than lose it
            problems.append(f"{index} on {table}: REINDEX INDEX CONCURRENTLY {quoted(schema, index)};")
        else:
            problems.append(f"{index} on {table}: DROP INDEX CONCURRENTLY {quoted(schema, index)};")
    return problems


def main(argv, env):
    db = driver()
    settings = read_settings(argv[1])
    conn = wait(db, connection_args(settings, env))
    cur = conn.cursor()
    newer = newer_than_image(cur)
    if newer:
        print("The database was migrated by a newer release than this image runs, so nothing was migrated "
              "(the older code would fail on it, and migrate does not run backwards). Set pulp:image to the "
              "release that migrated it (pulp status on the install that uses it names it), or restore a "
              "backup taken before that release, then `pulumi up` again:", file=sys.stderr)
        for p in newer:
            print("  " + p, file=sys.stderr)
        return 1
    key_path = settings.get("DB_ENCRYPTION_KEY")
    if key_path and unreadable_fields(cur, key_path):
        print("The database's encrypted fields (remote credentials) cannot be read with this install's key "
              "(pulp:dbFieldsEncryptionKey): another install wrote them, and Pulp would fail on every remote "
              "and sync that reads them. Nothing was migrated. Set the key of the install that wrote them, "
              "from its file database_fields.symmetric.key (pulp-operator keeps it in the Secret "
              "<name>-db-fields-encryption), then `pulumi up` again:", file=sys.stderr)
        print("  pulumi config set --secret pulp:dbFieldsEncryptionKey < database_fields.symmetric.key",
              file=sys.stderr)
        return 1
    if "--clear-stale-appstatus" in argv:
        clear_stale_appstatus(cur)
    problems = repair_invalid_indexes(cur)
    if problems:
        print("INVALID indexes (an interrupted CREATE INDEX CONCURRENTLY) would make `migrate` fail. "
              "Check nothing is building them, run each statement with psql as the database owner, "
              "then `pulumi up` again:", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv, os.environ))
