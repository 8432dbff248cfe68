#!/bin/bash
# Loads one backup (backup.sh's layout) into a new install, run by the restore Job (restore.ts) before the
# first migration, in a PostgreSQL image, after artifactCheck.py found every artifact the backup references
# in it or in this install's storage. Checks everything before it changes anything: the backup is
# complete, not from a newer pulpcore than the target's, made with the keys this install runs with, and
# the database is empty unless the stack confirmed an overwrite. Then the artifacts (content-addressed: copying them again is harmless), and last
# the database in one transaction, so a failed restore can simply run again.
#
# Env: BACKUP_DIR (the backup, read-only), MEDIA_ROOT (empty: artifacts in object storage), KEYS_DIR,
# TARGET_PULPCORE, OVERWRITE_FILE (default: `overwrite` beside this script, from the same ConfigMap; holds
# the backup id when an overwrite is confirmed); PG* for libpq.
set -euo pipefail
umask 027
dir=${BACKUP_DIR:?}
t0=$SECONDS
log() { printf '%s restore: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
fail() { log "REFUSED: $*"; printf 'restore refused: %s\n' "$*" >"${TERMINATION_LOG:-/dev/termination-log}"; exit 1; }

[[ -f $dir/manifest.json ]] || fail "no backup at $dir (no manifest.json): check pulp:restore.backup and pulp:restore.claim (npm run backup -- list)"
manifest=$(cat "$dir/manifest.json")
field() { sed -n "s/.*\"$1\": *\"\\([^\"]*\\)\".*/\\1/p" <<<"$manifest" | head -n 1; }

# Not from a newer pulpcore: its schema would be ahead of every migration this image knows.
backup_core=$(sed -n 's/.*"pulpcore": *"\([^"]*\)".*/\1/p' <<<"$manifest" | head -n 1)
if [[ -n ${TARGET_PULPCORE:-} && -n $backup_core ]] \
  && [[ $(printf '%s\n%s\n' "$backup_core" "$TARGET_PULPCORE" | sort -V | tail -n 1) != "$TARGET_PULPCORE" ]]; then
  fail "the backup is from pulpcore $backup_core, newer than this install's $TARGET_PULPCORE: restore it with pulp:image at $backup_core or newer"
fi

# The keys: the db-fields key decrypts what the dump holds encrypted; the others keep logins and the admin.
# Over a live install they are its own, which the stack keeps (protected): another install's backup, or
# one from before its keys changed, goes into a new stack instead.
confirmed=$(cat "${OVERWRITE_FILE:-$(dirname "$0")/overwrite}" 2>/dev/null || true)
for f in secret_key database_fields.symmetric.key admin_password; do
  want=$(field "$f")
  [[ -n $want ]] || fail "the backup's manifest has no $f"
  have=$(sha256sum "$KEYS_DIR/$f" | cut -d' ' -f1)
  [[ $have == "$want" ]] && continue
  [[ $confirmed == "$(field id)" ]] && fail "this install's $f is not the backup's, and an install's keys are kept: restore this backup into a new stack (pulumi stack init; npm run backup -- keys $(field id)). Nothing was changed; to start this install again: pulumi config rm pulp:restore, then pulumi up --refresh"
  fail "this install's $f is not the backup's: set it from the backup with npm run backup -- keys $(field id)"
done
sha256sum "$dir/database.dump" | cut -d' ' -f1 | grep -qx "$(sed -n 's/.*"database":.*"sha256": *"\([0-9a-f]*\)".*/\1/p' <<<"$manifest")" \
  || fail "database.dump does not match the manifest's sha256: the backup is damaged"

# Into an empty database, or over a live one only when the stack confirmed it for this very backup
# (pulp:restore.overwrite, in OVERWRITE_FILE; every Pulp process is stopped by then).
overwrite=false
if [[ $(psql -XAtc "SELECT to_regclass('public.django_migrations') IS NOT NULL") != f ]]; then
  [[ $confirmed == "$(field id)" ]] \
    || fail "database $PGDATABASE on $PGHOST is not empty (it has Pulp's tables): a restore goes into a new install, or over a live one with pulp:restore.overwrite"
  overwrite=true
fi

# artifactCheck.py compared the storages first; this holds even where it did not run (an older Job's pod).
referenced=$(grep -c . "$dir/artifacts.list" || true)
if [[ -n ${MEDIA_ROOT:-} && ! -d $dir/media ]] && ((referenced > 0)); then
  fail "the backup holds none of its $referenced artifacts (they were in object storage), and this install keeps them on a volume: every one would be missing"
fi
if [[ -z ${MEDIA_ROOT:-} && -d $dir/media ]] && ((referenced > 0)); then
  fail "the backup holds its $referenced artifacts for a volume, and this install keeps them in object storage: a restore copies them into a volume only"
fi

log "restoring backup $(field id) (pulpcore ${backup_core:-?}) into $PGDATABASE on $PGHOST"
if [[ -n ${MEDIA_ROOT:-} && -d $dir/media ]]; then
  mkdir -p "$MEDIA_ROOT"
  tar -C "$dir/media" -cf - . | tar -C "$MEDIA_ROOT" -xf - || fail "copying the artifacts into $MEDIA_ROOT failed"
  missing=$(LC_ALL=C comm -23 "$dir/artifacts.list" <(cd "$MEDIA_ROOT" && find . -type f -printf '%P\n' | LC_ALL=C sort) | wc -l)
  ((missing == 0)) || fail "$missing artifact file(s) the database references are missing after the copy"
  log "artifacts copied"
fi
if [[ $overwrite == true ]]; then
  # The old schema goes in the same transaction as the restore: a failure leaves the live data as it was.
  log "replacing the live database"
  { printf 'DROP SCHEMA public CASCADE;\nCREATE SCHEMA public;\n'
    pg_restore --no-owner --no-privileges --file=- "$dir/database.dump"; } \
    | psql -X -q -v ON_ERROR_STOP=1 --single-transaction >/dev/null \
    || fail "the restore failed (see the log); the database is unchanged"
else
  pg_restore --dbname="$PGDATABASE" --no-owner --no-privileges --single-transaction --exit-on-error "$dir/database.dump" \
    || fail "pg_restore failed (see the log); the database is unchanged, and the next pulumi up runs the restore again"
fi
log "done in $((SECONDS - t0)) s"
printf '{"restored": "%s", "seconds": %d}\n' "$(field id)" "$((SECONDS - t0))" >"${TERMINATION_LOG:-/dev/termination-log}"
