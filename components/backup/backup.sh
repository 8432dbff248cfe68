#!/bin/bash
# One backup of a Pulp install, run by the backup Job (backup.ts) in a PostgreSQL image: pg_dump,
# pg_restore, GNU coreutils, find and tar. Writes $BACKUP_ROOT/.partial-<id>/ and renames it to
# $BACKUP_ROOT/<id>/ only when everything is in, so a directory named by an id is always complete.
#
# Consistency: the database is dumped first (one snapshot), then the artifacts are copied. Artifacts are
# content-addressed and only ever added or deleted, so a copy taken after the dump holds every file the
# dump references, plus perhaps newer ones (harmless). The one race, an orphan cleanup deleting files
# between the two, is checked: every artifact row of the dump must have its file in the copy.
#
# The rest of Pulp's volume (/var/lib/pulp but media/ and tmp/: signing-service scripts, GnuPG keyrings)
# goes into keys/pulp-data.tar, apart from the archive like the keys, since keyrings hold private keys.
# With object storage /var/lib/pulp is a per-pod scratch directory: nothing there outlives a pod.
#
# Artifacts are copied incrementally: files unchanged since the previous backup (same path, size and
# mtime) are hard links to its copies, so each backup is complete on its own and deleting an old one
# frees only what no newer backup shares.
#
# Env: BACKUP_ROOT, KEEP (backups kept, this one included), MEDIA_ROOT (empty: artifacts live in object
# storage), KEYS_DIR (the key Secrets as files), CONFIG_FILE, VERSIONS_FILE (written by the init
# container), INSTANCE, NAMESPACE, STORAGE, RESULT_FILE (optional: the result line again, for upload.py);
# DATA_DIR (default: MEDIA_ROOT's parent, the volume); PG* for libpq.
set -euo pipefail
# Owner and group only: the group is the pod's fsGroup (Pulp's gid), which whatever restores runs in.
umask 027

root=${BACKUP_ROOT:?} keep=${KEEP:?}
id=$(date -u +%Y%m%dT%H%M%SZ)
work=$root/.partial-$id
final=$root/$id
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
t0=$SECONDS
log() { printf '%s backup %s: %s\n' "$(date -u +%H:%M:%S)" "$id" "$*"; }
fail() { log "FAILED: $*"; printf 'backup %s failed: %s\n' "$id" "$*" >"${TERMINATION_LOG:-/dev/termination-log}"; exit 1; }

# One backup at a time in a volume: the CronJob's concurrencyPolicy does not cover a Job created from it
# (npm run backup -- now) while a scheduled one runs, and each removes the others' partial copies below.
exec 9>"$root/.lock"
flock -n -E 75 9 || {
  status=$?
  ((status == 75)) && fail "another backup of this volume is running; run this one again once it is done (kubectl get jobs)"
  log "cannot lock $root/.lock (flock exit $status): going on without, as before"
}
[[ -e $final ]] && fail "$final exists already (two backups in one second); run it again"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

# 1. The database, in pg_dump's custom format (compressed; pg_restore can pick tables out of it).
server=$(psql -XAtc 'SHOW server_version') || fail "cannot reach PostgreSQL at $PGHOST:$PGPORT as $PGUSER"
pg_dump --format=custom --file="$work/database.dump" || fail "pg_dump failed (see the log above)"
log "database dumped ($(stat -c %s "$work/database.dump") bytes, PostgreSQL $server)"

# One table of the dump (the same snapshot): dump_columns (dumpColumns.sh, shipped beside this script).
# shellcheck source=dumpColumns.sh
. "$(dirname "${BASH_SOURCE[0]}")/dumpColumns.sh"
columns() { dump_columns "$work/database.dump" "$@"; }
# The artifact files the dump references.
columns core_artifact file pulp_domain_id >"$work/artifacts.rows"
cut -f1 "$work/artifacts.rows" | LC_ALL=C sort -u >"$work/artifacts.list"
referenced=$(wc -l <"$work/artifacts.list")

# Domains other than "default" keep their artifacts in a storage of their own (pulpcore's Domain.get_storage,
# pulpcore/app/models/domain.py@3.116.0), which this backup does not copy: refused when one with another
# storage class than the default domain's holds artifacts. One with the same class may use another
# location or bucket (its storage_settings are encrypted): the check on the copy below, or the restore's,
# names it when its files are not there.
columns core_domain pulp_id name storage_class >"$work/domains.rows"
foreign=$(awk -F'\t' 'NR == FNR { name[$1] = $2; class[$1] = $3; if ($2 == "default") own = $3; next }
  ($2 in name) && name[$2] != "default" { n[$2]++ }
  END { for (d in n) if (class[d] != own) printf "%s (%s, %d artifact(s))\n", name[d], class[d], n[d] }' \
  "$work/domains.rows" "$work/artifacts.rows" | LC_ALL=C sort | paste -sd ';' | sed 's/;/; /g')
if [[ -n $foreign ]]; then
  fail "domains keep artifacts in storages of their own, which a backup does not copy (it holds the default domain's storage, ${MEDIA_ROOT:-$STORAGE}): $foreign. A restore would reference artifacts it cannot bring back, so no backup is taken: back those storages up by their own means and move the domains' content into the default domain, or delete it"
fi

# 2. The artifacts, after the dump.
files=0 bytes=0
if [[ -n ${MEDIA_ROOT:-} ]]; then
  # Path, size and mtime in whole seconds (what tar keeps).
  listing() { (cd "$1" && find . -type f -printf '%P\t%s\t%Ts\n' | LC_ALL=C sort); }
  prev=$(find "$root" -mindepth 1 -maxdepth 1 -name '[0-9]*T*Z' -printf '%f\n' | LC_ALL=C sort | tail -n 1)
  mkdir -p "$work/media"
  listing "$MEDIA_ROOT" >"$work/source.list"
  if [[ -n $prev && -d $root/$prev/media ]]; then
    rmdir "$work/media" && cp -al "$root/$prev/media" "$work/media"
    listing "$work/media" >"$work/previous.list"
    # Gone or changed since the previous backup: drop the link; new or changed: copy below.
    LC_ALL=C comm -23 "$work/previous.list" "$work/source.list" | cut -f1 \
      | (cd "$work/media" && xargs -r -d '\n' rm -f --)
    LC_ALL=C comm -13 "$work/previous.list" "$work/source.list" | cut -f1 >"$work/copy.list"
    rm "$work/previous.list"
  else
    cut -f1 "$work/source.list" >"$work/copy.list"
  fi
  tar -C "$MEDIA_ROOT" -cf - --no-recursion -T "$work/copy.list" | tar -C "$work/media" -xf - \
    || fail "copying artifacts from $MEDIA_ROOT failed"
  log "artifacts: $(wc -l <"$work/copy.list") files copied, the rest linked to backup ${prev:-(none)}"
  rm "$work/copy.list" "$work/source.list"

  (cd "$work/media" && find . -type f -printf '%P\t%s\n' | LC_ALL=C sort) >"$work/media.list"
  LC_ALL=C comm -23 "$work/artifacts.list" <(cut -f1 "$work/media.list") >"$work/missing.list"
  missing=$(wc -l <"$work/missing.list")
  if ((missing > 0)); then
    first=$(head -n 3 "$work/missing.list" | paste -sd ' ')
    # A domain's files live under artifact/<its pulp_id>/ (pulpcore/app/models/storage.py@3.116.0).
    elsewhere=$(awk -F'\t' 'NR == FNR { if ($2 != "default") name[$1] = $2; next }
      { split($0, p, "/") } p[2] in name { n[name[p[2]]]++ }
      END { for (d in n) printf "%s (%d)\n", d, n[d] }' "$work/domains.rows" "$work/missing.list" | LC_ALL=C sort | paste -sd ' ')
    [[ -z $elsewhere ]] || fail "$missing artifact file(s) the database references are not in $MEDIA_ROOT (first: $first), of domains $elsewhere: their storage_settings keep them in a storage of their own, which a backup does not copy. Back it up by its own means and move the domains' content into the default domain, or delete it"
    fail "$missing artifact file(s) the database references are not in $MEDIA_ROOT (first: $first). An orphan cleanup during the backup deletes files like this: run the backup again. If it fails again, the volume lost them: Pulp's repair task (POST <apiRoot>api/v3/repair/) downloads them again where their remotes still have them"
  fi
  rm "$work/missing.list"
  files=$(wc -l <"$work/media.list")
  bytes=$(awk -F'\t' '{ s += $2 } END { print s + 0 }' "$work/media.list")
fi

rm "$work/artifacts.rows" "$work/domains.rows"

# 3. The keys (the database is unreadable without the db-fields key) and the config that made it.
mkdir "$work/keys"
cp -L "$KEYS_DIR"/* "$work/keys/"
cp "$CONFIG_FILE" "$work/config.json"
data=null
if [[ -n ${MEDIA_ROOT:-} ]]; then
  # The rest of the volume, modes kept (GnuPG wants its home 0700); not Pulp's scratch space, nor the
  # filesystem's lost+found (root's).
  data_dir=${DATA_DIR:-$(dirname "$MEDIA_ROOT")}
  (cd "$data_dir" && find . -mindepth 1 -maxdepth 1 ! -name "$(basename "$MEDIA_ROOT")" ! -name tmp ! -name lost+found -printf '%P\0') \
    | tar -C "$data_dir" --null -T - -cf "$work/keys/pulp-data.tar" \
    || fail "copying the rest of $data_dir (but media and tmp) failed: each file there must be readable by the backup (uid $(id -u))"
  data=$(tar -tvf "$work/keys/pulp-data.tar" | awk '!/^d/ { n++; s += $3 } END { printf "{\"file\": \"keys/pulp-data.tar\", \"files\": %d, \"bytes\": %d}", n, s }')
  log "the rest of $data_dir: $data"
fi

# 4. The manifest: what it holds, with sizes and checksums.
sum() { sha256sum "$1" | cut -d' ' -f1; }
# hmac_sha256 KEY_FILE FILE (keyDigest.sh, shipped beside this script)
# shellcheck source=keyDigest.sh
. "$(dirname "${BASH_SOURCE[0]}")/keyDigest.sh"
# A person may have chosen admin_password: its plain sha256 in the manifest (which upload.py puts beside the
# archive as <id>.json) could be brute-forced, so it is an HMAC keyed by secret_key, the scheme written
# before it. The other keys are random (secret_key: 50 characters or more, or the plan warns; Fernet keys;
# key pairs) or an archive: their plain sha256 gives nothing away.
keys=$(cd "$work/keys" && for f in *; do
  if [[ $f == admin_password ]]; then value=hmac-sha256:$(hmac_sha256 secret_key "$f"); else value=$(sum "$f"); fi
  printf '%s"%s": "%s"' "${sep:-}" "$f" "$value"
  sep=', '
done)
cat >"$work/manifest.json" <<EOF
{
  "format": 1,
  "id": "$id",
  "instance": "$INSTANCE",
  "namespace": "$NAMESPACE",
  "started": "$started",
  "finished": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "versions": $(cat "$VERSIONS_FILE"),
  "database": {"file": "database.dump", "format": "pg_dump custom", "server": "$server", "bytes": $(stat -c %s "$work/database.dump"), "sha256": "$(sum "$work/database.dump")"},
  "artifacts": {"storage": "$STORAGE", "referenced": $referenced, "files": $files, "bytes": $bytes, "list": "media.list"},
  "data": $data,
  "keys": {$keys},
  "config": {"file": "config.json", "sha256": "$(sum "$work/config.json")"}
}
EOF
mv "$work" "$final"
trap - EXIT
log "complete in $((SECONDS - t0)) s: $final"

# 5. Retention: the newest $keep complete backups stay; half-written ones of earlier runs go.
find "$root" -mindepth 1 -maxdepth 1 -name '.partial-*' ! -name ".partial-$id" -exec rm -rf {} +
find "$root" -mindepth 1 -maxdepth 1 -name '[0-9]*T*Z' -printf '%f\n' | LC_ALL=C sort -r | tail -n +"$((keep + 1))" \
  | while read -r old; do rm -rf "${root:?}/$old" && log "retention: removed $old"; done

result=$(printf '{"id": "%s", "seconds": %d, "databaseBytes": %s, "artifactFiles": %s, "artifactBytes": %s}' \
  "$id" "$((SECONDS - t0))" "$(stat -c %s "$final/database.dump")" "$files" "$bytes")
echo "$result" >"${TERMINATION_LOG:-/dev/termination-log}"
# For the container that puts it into object storage, when there is one.
[[ -z ${RESULT_FILE:-} ]] || echo "$result" >"$RESULT_FILE"
echo "$result"
