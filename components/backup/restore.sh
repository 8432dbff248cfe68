#!/bin/bash
# Loads one backup (backup.sh's layout, or a pulp-operator PulpBackup's) into a new install, run by the
# restore Job (restore.ts) before the first migration, in a PostgreSQL image, after restoreCheck.py found
# every artifact the backup references in it or in this install's storage. Checks everything before it
# changes anything: the backup is complete, not from a newer pulpcore than the target's, made with the
# keys this install runs with, and the database is empty unless the stack confirmed an overwrite. Then the
# artifacts (content-addressed: copying them again is harmless), and last the database in one
# transaction, so a failed restore can simply run again.
#
# The database is restored as the Pulp user, who need not own the database, schema public or the
# extensions: PostgreSQL 14 and older give public to the bootstrap superuser, managed databases to their
# admin, and DBAs often create hstore (Pulp's migration 0098) themselves. So public, the extensions and
# comments (COMMENT ON EXTENSION takes its owner) are left as they are: over a live install only the Pulp
# user's own objects in public are dropped, and the dump's CREATE EXTENSION IF NOT EXISTS is a no-op where
# the extension exists, whoever owns it. A preflight names what the user lacks, before anything changes.
#
# Env: BACKUP_DIR (the backup, read-only), MEDIA_ROOT (empty: artifacts in object storage), DATA_DIR
# (default: MEDIA_ROOT's parent, the volume), KEYS_DIR,
# TARGET_PULPCORE, OVERWRITE_FILE (default: `overwrite` beside this script, from the same ConfigMap; holds
# the backup id when an overwrite is confirmed); PG* for libpq.
set -euo pipefail
umask 027
dir=${BACKUP_DIR:?}
t0=$SECONDS
log() { printf '%s restore: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
fail() { log "REFUSED: $*"; printf 'restore refused: %s\n' "$*" >"${TERMINATION_LOG:-/dev/termination-log}"; exit 1; }

# A pulp-operator PulpBackup (controllers/backup at 2.0.0): pulp.db (pg_dump -Ft), pulp/ (cp -fa of
# /var/lib/pulp), its Secrets as YAML, no manifest. restoreCheck.py checked its keys and its storage; it
# names no releases (the migration Job refuses a database a newer release migrated).
operator=false
if [[ ! -f $dir/manifest.json && -f $dir/pulp.db ]]; then operator=true; fi
[[ $operator == true || -f $dir/manifest.json ]] || fail "no backup at $dir (no manifest.json, nor a PulpBackup's pulp.db): check pulp:restore.backup and pulp:restore.claim (npm run backup -- list)"
manifest=$(cat "$dir/manifest.json" 2>/dev/null || echo '{}')
confirmed=$(cat "${OVERWRITE_FILE:-$(dirname "$0")/overwrite}" 2>/dev/null || true)
data_tar=""
field() { sed -n "s/.*\"$1\": *\"\\([^\"]*\\)\".*/\\1/p" <<<"$manifest" | head -n 1; }
if [[ $operator == true ]]; then
  id=$(basename "$dir")
  dump=$dir/pulp.db
  pg_restore --list "$dump" >/dev/null || fail "$id/pulp.db is not a pg_dump archive this pg_restore reads: the PulpBackup is damaged, or from a newer PostgreSQL than pulp:backup.image's"
  [[ -d $dir/pulp ]] || fail "PulpBackup $id has no pulp/ directory: it did not finish"
else
  id=$(field id)
  dump=$dir/database.dump

  # Not from a newer pulpcore: its schema would be ahead of every migration this image knows.
  backup_core=$(sed -n 's/.*"pulpcore": *"\([^"]*\)".*/\1/p' <<<"$manifest" | head -n 1)
  if [[ -n ${TARGET_PULPCORE:-} && -n $backup_core ]] \
    && [[ $(printf '%s\n%s\n' "$backup_core" "$TARGET_PULPCORE" | sort -V | tail -n 1) != "$TARGET_PULPCORE" ]]; then
    fail "the backup is from pulpcore $backup_core, newer than this install's $TARGET_PULPCORE: restore it with pulp:image at $backup_core or newer"
  fi

  # hmac_sha256 KEY_FILE FILE (keyDigest.sh, shipped beside this script)
  # shellcheck source=keyDigest.sh
  . "$(dirname "${BASH_SOURCE[0]}")/keyDigest.sh"
  # The keys: the db-fields key decrypts what the dump holds encrypted; the others keep logins and the admin.
  # Over a live install they are its own, which the stack keeps (protected): another install's backup, or
  # one from before its keys changed, goes into a new stack instead.
  # secret_key first: it keys the HMAC backup.sh writes for admin_password ("hmac-sha256:<hex>"); backups
  # from before that hold a plain sha256 (64 hex digits), still compared as such.
  for f in secret_key database_fields.symmetric.key admin_password; do
    want=$(field "$f")
    [[ -n $want ]] || fail "the backup's manifest has no $f"
    case $want in
      hmac-sha256:*) have=hmac-sha256:$(hmac_sha256 "$KEYS_DIR/secret_key" "$KEYS_DIR/$f") ;;
      *:*) fail "the backup's manifest has $f as ${want%%:*}, which this restore does not know: restore it with the version of this program that took it, or a newer one" ;;
      *) have=$(sha256sum "$KEYS_DIR/$f" | cut -d' ' -f1) ;;
    esac
    [[ $have == "$want" ]] && continue
    [[ $confirmed == "$id" ]] && fail "this install's $f is not the backup's, and an install's keys are kept: restore this backup into a new stack (pulumi stack init; npm run backup -- keys $id). Nothing was changed; to start this install again: pulumi config rm pulp:restore, then pulumi up --refresh"
    fail "this install's $f is not the backup's: set it from the backup with npm run backup -- keys $id"
  done
  sha256sum "$dump" | cut -d' ' -f1 | grep -qx "$(sed -n 's/.*"database":.*"sha256": *"\([0-9a-f]*\)".*/\1/p' <<<"$manifest")" \
    || fail "database.dump does not match the manifest's sha256: the backup is damaged"
  # The rest of the backed-up volume (backup.sh: signing-service scripts, GnuPG keyrings), with the keys: a
  # backup brought in as its archive (http, the bucket) has no keys/, and these stay behind, said below.
  data_tar=$dir/keys/pulp-data.tar
  data_files=$(sed -n 's/.*"data": *{.*"files": *\([0-9]*\).*/\1/p' <<<"$manifest")
  if [[ -f $data_tar ]]; then
    [[ $(sha256sum "$data_tar" | cut -d' ' -f1) == "$(field pulp-data.tar)" ]] \
      || fail "keys/pulp-data.tar does not match the manifest's sha256: the backup is damaged"
  fi
fi

# Into an empty database, or over a live one only when the stack confirmed it for this very backup
# (pulp:restore.overwrite, in OVERWRITE_FILE; every Pulp process is stopped by then).
overwrite=false
if [[ $(psql -XAtc "SELECT to_regclass('public.django_migrations') IS NOT NULL") != f ]]; then
  [[ $confirmed == "$id" ]] \
    || fail "database $PGDATABASE on $PGHOST is not empty (it has Pulp's tables): a restore goes into a new install, or over a live one with pulp:restore.overwrite"
  overwrite=true
fi

# What the Pulp user needs: CREATE in public; each of the dump's extensions there in the dump's schema,
# or the right to create it (trusted, CREATE on the database); over a live install, the right to drop
# every object in public that is not an extension's (the restore drops those first).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pg_restore --list "$dump" | grep -E '^[0-9]+; [0-9]+ [0-9]+ EXTENSION - ' >"$work/extensions.list" || true
extensions=$(pg_restore --use-list="$work/extensions.list" --file=- "$dump" \
  | sed -n 's/^CREATE EXTENSION IF NOT EXISTS \([a-z0-9_]*\) WITH SCHEMA \([a-z0-9_]*\);$/('"'"'\1'"'"', '"'"'\2'"'"')/p' | paste -sd,)
problems=$(psql -XAt -v ON_ERROR_STOP=1 <<SQL
SELECT format('%s cannot create tables in schema public (owner %s): GRANT CREATE ON SCHEMA public TO %I, run by its owner',
  current_user, pg_get_userbyid(nspowner), current_user)
  FROM pg_namespace WHERE nspname = 'public' AND NOT has_schema_privilege(oid, 'CREATE');
SELECT CASE
    WHEN e.oid IS NOT NULL THEN format('extension %s is in schema %s here and in schema %s in the backup: ALTER EXTENSION %I SET SCHEMA %I, run by its owner %s',
      w.name, n.nspname, w.schema, w.name, w.schema, pg_get_userbyid(e.extowner))
    WHEN a.name IS NULL THEN format('the backup needs extension %s, which this PostgreSQL server does not have (in Debian and the postgres images: postgresql-contrib)', w.name)
    ELSE format('the backup needs extension %s, which database %s does not have and %s cannot create: CREATE EXTENSION %I WITH SCHEMA %I, run in database %s by a superuser or its owner',
      w.name, current_database(), current_user, w.name, w.schema, current_database())
  END
  FROM (VALUES ${extensions:-(NULL, NULL)}) AS w(name, schema)
  LEFT JOIN pg_extension e ON e.extname = w.name LEFT JOIN pg_namespace n ON n.oid = e.extnamespace
  LEFT JOIN pg_available_extension_versions a ON a.name = w.name
    AND a.version = (SELECT default_version FROM pg_available_extensions WHERE name = w.name)
  WHERE w.name IS NOT NULL AND (CASE WHEN e.oid IS NOT NULL THEN n.nspname <> w.schema
    ELSE a.name IS NULL OR NOT ((SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
      OR (a.trusted AND has_database_privilege(current_database(), 'CREATE'))) END);
SELECT format('over the live install, %s must drop every object in schema public, and %s of them belong to others (%s): make %s their owner or drop them, run by their owners',
    current_user, count(*), string_agg(what, ', ' ORDER BY what), current_user)
  FROM (
    SELECT format('%s %s of %s', CASE WHEN relkind IN ('v', 'm') THEN 'view' WHEN relkind = 'S' THEN 'sequence' ELSE 'table' END,
        relname, pg_get_userbyid(relowner)) AS what, relowner AS owner, 'pg_class'::regclass AS class, oid
      FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
    UNION ALL SELECT format('function %s of %s', oid::regprocedure, pg_get_userbyid(proowner)), proowner, 'pg_proc', oid
      FROM pg_proc WHERE pronamespace = 'public'::regnamespace AND prokind IN ('f', 'p')
  ) o
  WHERE $overwrite AND NOT pg_has_role(owner, 'USAGE')
    AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = o.class AND d.objid = o.oid AND d.deptype = 'e')
  HAVING count(*) > 0;
SQL
) || fail "cannot check what $PGUSER may do in database $PGDATABASE on $PGHOST (see the log)"
[[ -z $problems ]] || fail "$(paste -sd';' <<<"$problems" | sed 's/;/; /g'). Nothing was changed"

media=$dir/media
artifacts_list=$dir/artifacts.list
if [[ $operator == true ]]; then
  # A PulpBackup lists nothing: the artifact files its dump references (core_artifact.file), sorted as
  # backup.sh sorts artifacts.list.
  media=$dir/pulp/media
  artifacts_list=$work/artifacts.list
  # shellcheck source=dumpColumns.sh
  . "$(dirname "${BASH_SOURCE[0]}")/dumpColumns.sh"
  dump_columns "$dump" core_artifact file | LC_ALL=C sort -u >"$artifacts_list"
fi

# restoreCheck.py compared the storages first; this holds even where it did not run (an older Job's pod).
referenced=$(grep -c . "$artifacts_list" || true)
if [[ -n ${MEDIA_ROOT:-} && ! -d $media ]] && ((referenced > 0)); then
  fail "the backup holds none of its $referenced artifacts (they were in object storage), and this install keeps them on a volume: every one would be missing"
fi
if [[ -z ${MEDIA_ROOT:-} && -d $media ]] && ((referenced > 0)); then
  fail "the backup holds its $referenced artifacts for a volume, and this install keeps them in object storage: a restore copies them into a volume only"
fi

log "restoring backup $id (pulpcore ${backup_core:-?}) into $PGDATABASE on $PGHOST"
if [[ -n ${MEDIA_ROOT:-} && -d $media ]]; then
  mkdir -p "$MEDIA_ROOT"
  tar -C "$media" -cf - . | tar -C "$MEDIA_ROOT" -xf - || fail "copying the artifacts into $MEDIA_ROOT failed"
  missing=$(LC_ALL=C comm -23 "$artifacts_list" <(cd "$MEDIA_ROOT" && find . -type f -printf '%P\n' | LC_ALL=C sort) | wc -l)
  ((missing == 0)) || fail "$missing artifact file(s) the database references are missing after the copy"
  log "artifacts copied"
fi
data_note=""
if [[ $operator == true && -n ${MEDIA_ROOT:-} ]]; then
  # The rest of the operator's copy of /var/lib/pulp (signing scripts, GnuPG homes), modes kept, as backup.sh
  # keeps it: not Pulp's scratch space, nor the filesystem's lost+found.
  data_dir=${DATA_DIR:-$(dirname "$MEDIA_ROOT")}
  (cd "$dir/pulp" && find . -mindepth 1 -maxdepth 1 ! -name media ! -name tmp ! -name lost+found -printf '%P\0') \
    | tar -C "$dir/pulp" --null -T - -cf - | tar -C "$data_dir" -xpf - \
    || fail "copying the rest of the PulpBackup's pulp/ (but media and tmp) into $data_dir failed"
  log "the rest of the PulpBackup's pulp/ restored into $data_dir"
elif [[ -f $data_tar && -n ${MEDIA_ROOT:-} ]]; then
  data_dir=${DATA_DIR:-$(dirname "$MEDIA_ROOT")}
  tar -C "$data_dir" -xpf "$data_tar" || fail "copying the rest of the backed-up volume into $data_dir failed"
  log "the rest of the volume restored into $data_dir (${data_files:-?} files)"
elif ((${data_files:-0} > 0)); then
  data_note="the backup's $data_files other file(s) of /var/lib/pulp (signing-service scripts, GnuPG keyrings) were not restored: "
  if [[ -z ${MEDIA_ROOT:-} ]]; then
    data_note+="this install keeps artifacts in object storage, where /var/lib/pulp is each pod's scratch space"
  else
    data_note+="they are $id/keys/pulp-data.tar in its keys archive ($id.keys.tar in the bucket, or export's), which this restore did not have; once Pulp runs: tar -xOf <keys archive> $id/keys/pulp-data.tar | kubectl exec -i <api pod> -- tar -C /var/lib/pulp -xpf -"
  fi
  log "WARNING: $data_note"
fi
# One transaction: over a live install the Pulp user's objects in public are dropped first (CASCADE takes
# indexes, constraints, triggers, owned sequences), so a failure leaves the live data as it was, and
# tables the backup does not have (newer migrations) go too. public itself, the extensions (and their
# member objects) and their owners stay. COMMIT is sent only once pg_restore has written everything:
# psql --single-transaction commits whatever it was given when its input ends early.
# Where the Pulp user owns schema public and every extension in it (CloudNativePG, PostgreSQL 15 with the
# user owning the database), the schema is dropped and made again as before: the way proven on real Pulp.
# Only where it does not (PostgreSQL 14, managed databases, a DBA's hstore) are its own objects dropped one
# by one: that way is proven on PostgreSQL alone (test/e2e/restoreDatabase.test.ts), not yet on real Pulp.
drop=objects
if [[ $overwrite == true && $(psql -XAtc "SELECT pg_has_role(nspowner, 'USAGE') AND NOT EXISTS (
    SELECT FROM pg_extension WHERE extnamespace = n.oid AND NOT pg_has_role(extowner, 'USAGE'))
  FROM pg_namespace n WHERE nspname = 'public'") == t ]]; then
  drop=schema
fi
if [[ $overwrite == true ]]; then log "replacing the live database (dropping its $drop in public first)"; fi
{ printf 'BEGIN;\nSET client_min_messages = warning;\n'
  [[ $overwrite == false || $drop != schema ]] || printf 'DROP SCHEMA public CASCADE;\nCREATE SCHEMA public;\n'
  [[ $overwrite == false || $drop != objects ]] || cat <<'SQL'
DO $drop$
DECLARE o record;
BEGIN
  FOR o IN
    SELECT format('DROP %s IF EXISTS public.%I CASCADE', CASE relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
        WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END, relname) AS sql, 'pg_class'::regclass AS class, oid
      FROM pg_class c WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
        -- Identity and serial sequences go with their table: dropped alone, an identity one is refused
        -- ("column id of table ... requires it"), as Django's identity columns showed on real Pulp.
        AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
          AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i'))
    UNION ALL SELECT format('DROP ROUTINE IF EXISTS public.%I(%s) CASCADE', proname, pg_get_function_identity_arguments(oid)), 'pg_proc', oid
      FROM pg_proc WHERE pronamespace = 'public'::regnamespace AND prokind IN ('f', 'p')
    UNION ALL SELECT format('DROP TYPE IF EXISTS public.%I CASCADE', typname), 'pg_type', t.oid
      FROM pg_type t WHERE typnamespace = 'public'::regnamespace AND typtype IN ('c', 'd', 'e', 'r')
        AND (typrelid = 0 OR (SELECT relkind FROM pg_class WHERE oid = typrelid) = 'c')
  LOOP
    CONTINUE WHEN EXISTS (SELECT FROM pg_depend d WHERE d.classid = o.class AND d.objid = o.oid AND d.deptype = 'e');
    EXECUTE o.sql;
  END LOOP;
END $drop$;
SQL
  pg_restore --no-owner --no-privileges --no-comments --file=- "$dump" && printf 'COMMIT;\n'; } \
  | psql -X -q -v ON_ERROR_STOP=1 >/dev/null \
  || fail "the restore failed (see the log); the database is unchanged, and the next pulumi up runs the restore again"
log "done in $((SECONDS - t0)) s"
printf '{"restored": "%s", "seconds": %d%s}\n' "$id" "$((SECONDS - t0))" "${data_note:+, \"warning\": \"$data_note\"}" \
  >"${TERMINATION_LOG:-/dev/termination-log}"
