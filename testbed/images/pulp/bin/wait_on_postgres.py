#!/usr/bin/python3
"""Exits 0 once Django can connect to Pulp's database, 1 after PULP_WAIT_ATTEMPTS tries (default 100,
PULP_WAIT_INTERVAL seconds apart, default 3). Also the worker's readiness check: one try when the
database is up."""
import os
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pulpcore.app.settings")
from django.db import connection, utils  # noqa: E402

attempts = int(os.environ.get("PULP_WAIT_ATTEMPTS", "100"))
interval = float(os.environ.get("PULP_WAIT_INTERVAL", "3"))
print("wait_on_postgres: connecting to the database", flush=True)
for attempt in range(1, attempts + 1):
    try:
        connection.ensure_connection()
        print("wait_on_postgres: database reachable", flush=True)
        sys.exit(0)
    except utils.OperationalError as e:
        last = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"wait_on_postgres: attempt {attempt}/{attempts}: {last}", flush=True)
        if attempt < attempts:
            time.sleep(interval)
print("wait_on_postgres: giving up", flush=True)
sys.exit(1)
