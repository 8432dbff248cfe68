#!/usr/bin/env python3
"""Reads one PyPI artifact of pulpcore or a plugin (wheel or sdist) and prints, as JSON, what the upgrade
table cares about: every Django migration (app label, name), its RequireVersion guards, whether it is a
squash that still carries `replaces`, which operations could break older code, and the pulpcore requirement. Stdlib only; nothing is imported from
the artifact, only read."""
import json
import re
import sys
import tarfile
import zipfile

MIGRATION = re.compile(r"(?:^|/)(pulpcore|pulp_[a-z_]+)/app/migrations/(\d{4}_[A-Za-z0-9_]+)\.py$")
GUARD = re.compile(r"RequireVersion\(\s*[\"']([a-z_]+)[\"']\s*,\s*[\"']([0-9.]+)[\"']")
# Operations that can break code still running the older release (a guard or a stop may be needed).
RISKY = re.compile(r"migrations\.(RemoveField|DeleteModel|RenameField|RenameModel|AlterField|RunPython|RunSQL)\(")
REPLACES = re.compile(r"^\s*replaces\s*=", re.M)
REQUIRES = re.compile(r"^Requires-Dist:\s*pulpcore\s*(.*)$", re.M)
PYPROJECT_REQ = re.compile(r"[\"']pulpcore\s*([<>=!~][^\"']*)[\"']")


def members(path):
    if path.endswith(".whl") or path.endswith(".zip"):
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                yield name, lambda n=name: z.read(n).decode("utf-8", "replace")
    else:
        with tarfile.open(path) as t:
            for m in t.getmembers():
                if m.isfile():
                    yield m.name, lambda m=m: t.extractfile(m).read().decode("utf-8", "replace")


def main(path):
    migrations, requires = [], None
    for name, read in members(path):
        m = MIGRATION.search(name)
        if m:
            text = read()
            package = m.group(1)
            migrations.append({
                "app": "core" if package == "pulpcore" else package[len("pulp_"):],
                "name": m.group(2),
                "guards": [[a, v] for a, v in GUARD.findall(text)],
                "replaces": bool(REPLACES.search(text)),
                "risky": sorted(set(RISKY.findall(text))),
            })
        elif requires is None and (name.endswith(".dist-info/METADATA") or re.search(r"^[^/]+/PKG-INFO$", name)):
            r = REQUIRES.search(read())
            requires = r.group(1).strip() if r else None
        elif requires is None and re.search(r"^[^/]+/(pyproject\.toml|requirements\.txt)$", name):
            r = PYPROJECT_REQ.search(read())
            requires = r.group(1).strip() if r else None
    migrations.sort(key=lambda m: (m["app"], m["name"]))
    json.dump({"migrations": migrations, "requiresPulpcore": requires}, sys.stdout)


main(sys.argv[1])
