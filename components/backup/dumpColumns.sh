# shellcheck shell=bash
# dump_columns DUMP TABLE COLUMN...: one table of a pg_dump archive, the named columns tab-separated: empty
# where it has no such column (core_artifact.pulp_domain_id came with domains), nothing where it has no
# such table. Sourced by backup.sh (what a backup references) and restore.sh (what a PulpBackup does).
dump_columns() {
  local dump=$1 table=$2
  shift 2
  pg_restore --data-only --table="$table" --file=- "$dump" | awk -F'\t' -v OFS='\t' -v want="$*" '
    /^COPY [^ ]+ \(/ {
      sub(/^[^(]*\(/, ""); sub(/\).*$/, ""); n = split($0, cols, ", "); m = split(want, w, " ")
      for (j = 1; j <= m; j++) for (i = 1; i <= n; i++) if (cols[i] == w[j]) at[j] = i
      rows = 1; next
    }
    rows && $0 == "\\." { rows = 0; next }
    rows { line = at[1] ? $at[1] : ""; for (j = 2; j <= m; j++) line = line OFS (at[j] ? $at[j] : ""); print line }'
}
