#!/bin/bash
# Returns once the database holds every migration this image's code ships (the migration Job applies
# them; processes never migrate by themselves). Waits while any is unapplied or while the check fails.
interval=${PULP_WAIT_INTERVAL:-5}
echo "wait_on_database_migrations: checking"
while true; do
  if plan=$(/usr/local/bin/pulpcore-manager showmigrations --plan 2>&1); then
    pending=$(grep -c '^\[ \]' <<<"$plan")
    if [ "$pending" -eq 0 ]; then
      echo "wait_on_database_migrations: schema is current"
      exit 0
    fi
    echo "wait_on_database_migrations: $pending migrations not applied yet"
  else
    echo "wait_on_database_migrations: showmigrations failed: $(tail -n 1 <<<"$plan")"
  fi
  sleep "$interval"
done
