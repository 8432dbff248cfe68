"""A pulpcore worker's startup and readiness check, run with Pulp's own interpreter and settings.

Ready while Pulp's database answers (what the image's wait_on_postgres.py checks).

With --wake it also wakes the workers when a task is stranded. pulpcore's workers look for waiting
tasks only when woken: by a dispatch, by a finished task, or by their cleanup every 10 to 100
heartbeats (tasking/worker.py, app_worker_cleanup). A task dispatched while no worker listened (all
stopped for an upgrade or a restore, the only worker moving to another node) would wait that long, up
to an hour. So would one whose wakeup a worker missed (3.89's sleep()). A task counts as stranded when
it has waited over STRANDED_SECONDS, no worker has unblocked it, and no running task holds any of its
resources. Waking is what a dispatch does; the workers then check every waiting task themselves.
"""

import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pulpcore.app.settings")
from django.db import DatabaseError, OperationalError, connection  # noqa: E402

STRANDED_SECONDS = 10

STRANDED = """
SELECT count(*) FROM core_task waiting
WHERE waiting.state = 'waiting' AND waiting.unblocked_at IS NULL
  AND waiting.pulp_created < now() - make_interval(secs => %s)
  AND NOT EXISTS (
    SELECT 1 FROM core_task running
    WHERE running.state = 'running'
      AND running.reserved_resources_record && waiting.reserved_resources_record)
"""

try:
    connection.ensure_connection()
except OperationalError as e:
    print(f"worker check: the database does not answer: {e}", flush=True)
    sys.exit(1)

if sys.argv[1:] == ["--wake"]:
    # Readiness is about the database answering: a failed look is reported, not a reason to be unready.
    try:
        with connection.cursor() as cursor:
            cursor.execute(STRANDED, [STRANDED_SECONDS])
            (stranded,) = cursor.fetchone()
            if stranded:
                cursor.execute("SELECT pg_notify('pulp_worker_wakeup', 'unblock')")
                print(f"worker check: woke the workers for {stranded} stranded task(s)", flush=True)
    except DatabaseError as e:
        print(f"worker check: cannot look for stranded tasks: {e}", flush=True)
sys.exit(0)
