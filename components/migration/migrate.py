"""
Pulp's manager commands of the migration Job, in one process: migrate, handle-artifact-checksums, the
system checks, then (after a restore) clearing Pulp's response cache, and the admin password. Each
`pulpcore-manager` call loads Django and every plugin again (about 2.5 s of CPU for the settings and apps
alone on a quiet node, more for the URLs the checks load), and a guarded upgrade waits on all of them.

Loaded as `migrate`: pulpcore 3.86.0-3.104.x (and LTS patches below 3.49.55, 3.63.32, 3.73.28, 3.85.13)
refuse to load their settings while artifacts lack a newly allowed checksum, for every command but migrate
and handle-artifact-checksums (pulpcore/app/settings.py@3.85.0). In one process the settings load once,
before `migrate`, and handle-artifact-checksums fixes the artifacts before the checks look at them.

Arguments: --clear-cache. The admin password comes from ADMIN_PASSWORD (no PULP_ prefix: dynaconf would
read it as a setting).
"""

import os
import sys


def clear_response_cache():
    """
    Pulp's response cache (pulpcore/cache: one Redis hash per distribution base path) after a restore:
    answers cached from the replaced database would be served until they expire. Hashes only, so the redis
    worker type's locks (strings and sets) stay; pulpcore's own invalidation deletes whole base keys too.
    """
    from pulpcore.app.redis_connection import get_redis_connection

    redis = get_redis_connection()
    deleted = sum(redis.delete(key) for key in redis.scan_iter(_type="hash"))
    print("Cached responses deleted after the restore:", deleted, flush=True)


def main(argv, env):
    clear_cache = "--clear-cache" in argv[1:]
    password = env["ADMIN_PASSWORD"]
    sys.argv = ["pulpcore-manager", "migrate"]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pulpcore.app.settings")

    import django
    from django.core.management import CommandError, call_command

    django.setup()
    try:
        call_command("migrate", interactive=False, skip_checks=True)
        call_command("handle-artifact-checksums", skip_checks=True)
        call_command("check", databases=["default"])
        if clear_cache:
            clear_response_cache()
        # password= rather than a command line: a value that starts with "-" is no option here.
        call_command("reset-admin-password", password=password)
    except CommandError as e:  # as pulpcore-manager prints it (the system checks' findings among them)
        print(f"{type(e).__name__}: {e}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv, os.environ))
