"""A pulpcore worker's startup and readiness check, run with Pulp's own interpreter and settings.

Ready while Pulp's database answers (what the image's wait_on_postgres.py checks).

With --wake it also wakes the workers when a task is stranded. pulpcore's workers look for waiting
tasks only when woken: by a dispatch, by a finished task, or by their cleanup every 10 to 100
heartbeats (tasking/worker.py, app_worker_cleanup). A task dispatched while no worker listened (all
stopped for an upgrade or a restore, the only worker moving to another node) would wait that long, up
to an hour. So would one whose wakeup a worker missed (3.89's sleep()). A task counts as stranded when
it has waited over STRANDED_SECONDS, no worker has unblocked it, and the workers would unblock it now.
Waking is what a dispatch does; the workers then check every waiting task themselves.

"Would unblock now" follows the workers' own rule (_unblock_tasks in pulpcore/tasking/worker.py@3.116.0,
the same since 3.49): in pulp_created order, a waiting task stays blocked while an earlier
incomplete task (running, canceling, or waiting: a queue keeps its order) holds one of its resources,
unless both take it shared ("shared:X" and "X" name the same resource X). Counting only running tasks
with the literal names took a task waiting for "shared:X" behind a sync holding "X" for stranded: every
worker pod then woke the workers every 30 s for the whole sync, each wakeup a scan of every incomplete
task.

With --wake it also releases the tasks of a worker that died without a word (SIGKILL, the OOM killer, a
lost node). Since 3.89 a worker holds its task through core_task.app_lock, a reference to its AppStatus
record, and only the workers' cleanup deletes a dead worker's record, every 10 to 100 heartbeats: until
then its task stays "running" and keeps its repository from every later task, up to 17 minutes. The check
does what that cleanup does, sooner and only for a worker that holds a task: a worker whose heartbeat is
older than twice its TTL (pulpcore calls it missing after one) loses its record and its task's lock, and
the workers are woken; one of them then fails the task as "Worker has gone missing" (handle_unblocked_tasks)
and the repository is free again. A worker that was only slow finds its record gone at its next heartbeat
and stops, as it would after pulpcore's own cleanup.
"""

import os
import sys
from importlib.metadata import version

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pulpcore.app.settings")
from django.db import DatabaseError, OperationalError, connection  # noqa: E402

STRANDED_SECONDS = 10

# One statement, one transaction: the lock lets one pod look and wake at a time (the others skip: the
# wakeup it sends serves them too); pulpcore's own advisory locks are in groups 0 and 4711, ours is
# "pulp" in ASCII. Each resource's takers are counted in pulp_created order with running sums (a
# window), so a long queue costs one sort, not a comparison of every pair of tasks.
WAKE_IF_STRANDED = """
WITH turn AS MATERIALIZED (
  SELECT pg_try_advisory_xact_lock(1886743664, 1) AS mine
), held AS (
  SELECT t.pulp_id, t.pulp_created, regexp_replace(r, '^shared:', '') AS resource,
         bool_or(r NOT LIKE 'shared:%%') AS exclusive
  FROM core_task t, unnest(t.reserved_resources_record) AS r
  WHERE t.state IN ('waiting', 'running', 'canceling')
  GROUP BY 1, 2, 3
), blocked AS (
  SELECT pulp_id FROM (
    SELECT pulp_id, exclusive, count(*) OVER upto - 1 AS takers,
           count(*) FILTER (WHERE exclusive) OVER upto - exclusive::int AS exclusive_takers
    FROM held
    WINDOW upto AS (PARTITION BY resource ORDER BY pulp_created, pulp_id ROWS UNBOUNDED PRECEDING)
  ) earlier
  WHERE exclusive_takers > 0 OR (exclusive AND takers > 0)
), stranded AS (
  SELECT count(*) AS n FROM core_task waiting
  WHERE (SELECT mine FROM turn)
    AND waiting.state = 'waiting' AND waiting.unblocked_at IS NULL
    AND waiting.pulp_created < now() - make_interval(secs => %s)
    AND waiting.pulp_id NOT IN (SELECT pulp_id FROM blocked)
)
SELECT mine, n, CASE WHEN n > 0 THEN (SELECT true FROM pg_notify('pulp_worker_wakeup', 'unblock')) END
FROM turn, stranded
"""

# One statement: the record, the lock and the wakeup go together or not at all (the wakeup is sent when
# the transaction commits). Django's on_delete=SET_NULL is Python's, so the lock is cleared here.
RELEASE_ABANDONED = """
WITH turn AS MATERIALIZED (
  SELECT pg_try_advisory_xact_lock(1886743664, 2) AS mine
), gone AS MATERIALIZED (
  SELECT app.pulp_id, app.name FROM core_appstatus app
  WHERE (SELECT mine FROM turn) AND app.app_type = 'worker'
    AND app.last_heartbeat < now() - 2 * app.ttl
    AND EXISTS (
      SELECT 1 FROM core_task t
      WHERE t.app_lock_id = app.pulp_id AND t.state IN ('running', 'canceling')
    )
), freed AS (
  UPDATE core_task SET app_lock_id = NULL
  WHERE app_lock_id IN (SELECT pulp_id FROM gone) RETURNING pulp_id
), dropped AS (
  DELETE FROM core_appstatus WHERE pulp_id IN (SELECT pulp_id FROM gone) RETURNING name
)
SELECT (SELECT string_agg(name, ', ') FROM dropped), (SELECT count(*) FROM freed),
       CASE WHEN EXISTS (SELECT 1 FROM freed)
         THEN (SELECT true FROM pg_notify('pulp_worker_wakeup', 'handle')) END
"""


def holds_tasks_by_app_lock():
    """Since pulpcore 3.89; before, tasks were held by session advisory locks a dead connection gives back."""
    return tuple(int(n) for n in version("pulpcore").split(".")[:2]) >= (3, 89)


try:
    connection.ensure_connection()
except OperationalError as e:
    print(f"worker check: the database does not answer: {e}", flush=True)
    sys.exit(1)

if sys.argv[1:] == ["--wake"]:
    # Readiness is about the database answering: a failed look is reported, not a reason to be unready.
    try:
        with connection.cursor() as cursor:
            cursor.execute(WAKE_IF_STRANDED, [STRANDED_SECONDS])
            _, stranded, woke = cursor.fetchone()
            if woke:
                print(f"worker check: woke the workers for {stranded} stranded task(s)", flush=True)
    except DatabaseError as e:
        print(f"worker check: cannot look for stranded tasks: {e}", flush=True)
    if holds_tasks_by_app_lock():
        try:
            with connection.cursor() as cursor:
                cursor.execute(RELEASE_ABANDONED)
                workers, tasks, _ = cursor.fetchone()
                if workers:
                    print(f"worker check: released {tasks} task(s) of missing worker(s) {workers}", flush=True)
        except DatabaseError as e:
            print(f"worker check: cannot look for abandoned tasks: {e}", flush=True)
sys.exit(0)
