#!/usr/bin/python3
"""Readiness of the api or content process in this container: readyz.py <path>.

The process is told by /proc/1/cmdline (the entry scripts exec pulpcore-api / pulpcore-content, so
PID 1 names one of them). api: GET http://localhost:24817<path> must report a database connection
(and Redis when REDIS_SERVICE_HOST is set). content: GET http://localhost:24816<path> must answer
200. Anything else fails: an unknown PID 1 is not ready, rather than silently ready."""
import json
import os
import sys
import urllib.request


def get(port, path):
    url = f"http://127.0.0.1:{port}{path}"
    with urllib.request.urlopen(url, timeout=float(os.environ.get("READYZ_TIMEOUT", "8"))) as r:
        return r.status, r.read()


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "/"
    with open("/proc/1/cmdline", "rb") as f:
        cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
    try:
        if "pulpcore-api" in cmdline or "pulp-api" in cmdline:
            status, body = get(24817, path)
            data = json.loads(body)
            if not data.get("database_connection", {}).get("connected"):
                print("readyz: api: no database connection")
                return 3
            if os.environ.get("REDIS_SERVICE_HOST") and not data.get("redis_connection", {}).get("connected"):
                print("readyz: api: no redis connection")
                return 4
            print(f"readyz: api ready ({status})")
            return 0
        if "pulpcore-content" in cmdline or "pulp-content" in cmdline:
            status, _ = get(24816, path)
            print(f"readyz: content ready ({status})")
            return 0
    except Exception as e:  # noqa: BLE001 - any failure means not ready
        print(f"readyz: {e}")
        return 1
    print(f"readyz: PID 1 is neither api nor content: {cmdline!r}")
    return 2


sys.exit(main())
