#!/usr/bin/env python3
"""Makes the volumes of the default StorageClass writable for non-root pods on the real node.

The controller-manager's host-path provisioner creates each volume as /tmp/hostpath_pv/<uuid> with
mode 0750, owned by root, and the hostPath volume plugin ignores a pod's fsGroup: a pod running as
uid 700 could read nothing and write nothing there. This watcher opens each new volume directory to
0777 (what local-path provisioners do) the moment it appears: inotify on the base directory, plus a
sweep every few seconds in case an event was missed. The provisioner creates the directory before
the PersistentVolume object exists, so no pod can mount it first.

  hostpath-perms.py BASE_DIR --owner NODE_DIR   (NODE_DIR only marks the process as the node's)
"""

import argparse
import ctypes
import os
import select
import stat
import sys

IN_CREATE, IN_MOVED_TO, IN_ISDIR = 0x100, 0x80, 0x40000000


def sweep(base: str) -> None:
    try:
        entries = list(os.scandir(base))
    except FileNotFoundError:
        return
    for e in entries:
        try:
            if e.is_dir(follow_symlinks=False) and stat.S_IMODE(e.stat(follow_symlinks=False).st_mode) != 0o777:
                os.chmod(e.path, 0o777)
                print(f"hostpath-perms: {e.path} -> 0777", flush=True)
        except FileNotFoundError:
            pass


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("base")
    p.add_argument("--owner", required=True)
    a = p.parse_args()
    os.makedirs(a.base, mode=0o755, exist_ok=True)
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0 or libc.inotify_add_watch(fd, a.base.encode(), IN_CREATE | IN_MOVED_TO) < 0:
        print(f"hostpath-perms: inotify on {a.base} failed: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
        return 1
    print(f"hostpath-perms: watching {a.base}", flush=True)
    sweep(a.base)
    while True:
        ready, _, _ = select.select([fd], [], [], 5.0)
        if ready:
            os.read(fd, 65536)  # the events only say "something new"; the sweep finds what
        sweep(a.base)


if __name__ == "__main__":
    sys.exit(main())
