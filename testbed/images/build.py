#!/usr/bin/env python3
"""Builds the test bed's container images from Debian packages and PyPI, cached by content hash.

    build.py build [IMAGE ...] [--pulpcore VERSION ...]  build (or reuse) images; prints their names
    build.py import --address SOCK [--ctr ctr] [NAME...]  ctr -n k8s.io images import every built image (or those named)
    build.py list                                     built images: name, archive, sizes
    build.py base-path                                the shared base rootfs (built if missing)

IMAGE is pulp-minimal, pulp-web, redis, postgresql or pgbouncer (default: all), or postgresql-17 (built and
imported only when named: the release the PostgreSQL major-upgrade test upgrades to). With several --pulpcore, the Pulp
images are built for each release (the first is the default; the others are the releases the real
upgrade tests start from) and Redis and PostgreSQL once. The cache is
${PULP_IMAGE_CACHE:-$HOME/.cache/pulp-pulumi-images}: base/<key>/ and images/<image>/<key>/, where
key hashes every input (recipe, helpers, assets, lock file, versions, Debian suite, mirror and the
suite's Release date). Same inputs: nothing is rebuilt.
"""
import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import oci  # noqa: E402

CACHE = os.environ.get("PULP_IMAGE_CACHE") or os.path.expanduser("~/.cache/pulp-pulumi-images")
SUITE = "bookworm"
# Images whose package bookworm has too old: CloudNativePG's Pooler writes `auth_dbname`, which
# PgBouncer has since 1.19 (bookworm ships 1.18; trixie 1.24).
# PostgreSQL 17, the major a CloudNativePG cluster of bookworm's 15 is upgraded to in place, is trixie's.
SUITES = {"pgbouncer": "trixie", "postgresql-17": "trixie"}
MIRROR = "http://deb.debian.org/debian"
BASE_INCLUDE = "python3,ca-certificates"
DEFAULT_PULPCORE = "3.123.1"
IMAGES = ["pulp-minimal", "pulp-web", "redis", "postgresql", "pgbouncer"]
# Built and imported only when named, so that the suites that never use them do not pay for them.
ON_REQUEST = ["postgresql-17"]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def sha(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()


def file_hash(*rel):
    h = hashlib.sha256()
    for r in rel:
        p = os.path.join(HERE, r)
        files = [p] if os.path.isfile(p) else sorted(
            os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs
        )
        for f in files:
            h.update(os.path.relpath(f, HERE).encode() + b"\0")
            with open(f, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


def release_date(suite):
    """The Date of the suite's Release file: a new point release is a new input."""
    try:
        with urllib.request.urlopen(f"{MIRROR}/dists/{suite}/Release", timeout=20) as r:
            for line in r.read(4096).decode().splitlines():
                if line.startswith("Date:"):
                    return line.split(":", 1)[1].strip()
    except OSError as e:
        log(f"warning: cannot read the {suite} Release file ({e}); using the newest cached base")
    return None


def ensure_debootstrap():
    """The one Debian package the builder needs on the host; installed as the project's own step."""
    if shutil.which("debootstrap"):
        return
    if os.geteuid() != 0:
        sys.exit("images: debootstrap is missing (apt-get install debootstrap)")
    log("installing debootstrap (Debian package)")
    if subprocess.run(["apt-get", "install", "-y", "-q", "debootstrap"], stdout=subprocess.DEVNULL).returncode:
        subprocess.run(["apt-get", "update", "-q"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["apt-get", "install", "-y", "-q", "debootstrap"], check=True, stdout=subprocess.DEVNULL)

def base_path(build=True, suite=SUITE):
    date = release_date(suite)
    inputs = {"suite": suite, "mirror": MIRROR, "variant": "minbase", "include": BASE_INCLUDE}
    bases = os.path.join(CACHE, "base")

    def of_suite(d):
        try:
            with open(os.path.join(bases, d, "done.json")) as f:
                return json.load(f).get("suite") == suite
        except OSError:
            return False

    if date is None:
        done = [d for d in (os.listdir(bases) if os.path.isdir(bases) else []) if of_suite(d)]
        if not done:
            sys.exit("no cached base and the Debian mirror is unreachable")
        newest = max(done, key=lambda d: os.path.getmtime(os.path.join(bases, d, "done.json")))
        return os.path.join(bases, newest, "rootfs")
    key = sha(json.dumps({**inputs, "release": date}, sort_keys=True))[:16]
    d = os.path.join(bases, key)
    if os.path.exists(os.path.join(d, "done.json")):
        return os.path.join(d, "rootfs")
    if not build:
        sys.exit(f"base {key} not built")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    t0 = time.time()
    ensure_debootstrap()
    log(f"base: debootstrap --variant=minbase {suite} (release {date})")
    subprocess.run(
        ["debootstrap", "--variant=minbase", f"--include={BASE_INCLUDE}", suite, os.path.join(d, "rootfs"), MIRROR],
        check=True, stdout=subprocess.DEVNULL,
    )
    with open(os.path.join(d, "done.json"), "w") as f:
        json.dump({**inputs, "release": date, "seconds": round(time.time() - t0)}, f)
    return os.path.join(d, "rootfs")


def debian_tag(version):
    """A Debian version as an OCI tag: no epoch, `~` and `+` become `_`."""
    return re.sub(r"[~+]", "_", version.split(":", 1)[-1])


def du(path):
    out = subprocess.run(["du", "-sb", path], capture_output=True, text=True, check=True).stdout
    return int(out.split()[0])


def peak_rss_kib():
    import resource
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


class Build:
    def __init__(self, pulpcore):
        self.pulpcore = pulpcore
        self.bases = {}
        self.results = {}

    def base(self, image):
        suite = SUITES.get(image, SUITE)
        if suite not in self.bases:
            self.bases[suite] = base_path(suite=suite)
        return self.bases[suite]

    def lock_file(self):
        p = os.path.join(HERE, "locks", f"pulpcore-{self.pulpcore}.txt")
        if not os.path.exists(p):
            sys.exit(f"no lock for pulpcore {self.pulpcore}: run testbed/images/lock.sh {self.pulpcore}")
        return p

    def key(self, image):
        base_key = os.path.basename(os.path.dirname(self.base(image)))
        common = [base_key, file_hash("recipes/lib.sh", f"recipes/{image}.sh", "oci.py")]
        if image == "pulp-minimal":
            common += [self.pulpcore, file_hash("pulp", os.path.relpath(self.lock_file(), HERE))]
        if image == "pulp-web":
            common += [self.image("pulp-minimal")["key"]]
        return sha(*common)[:16]

    def image(self, image):
        if image in self.results:
            return self.results[image]
        key = self.key(image)
        d = os.path.join(CACHE, "images", image, key)
        meta_path = os.path.join(d, "meta.json")
        if os.path.exists(meta_path):
            with open(meta_path) as f:
                meta = json.load(f)
            log(f"{image}: cached ({key}) {meta['name']}")
            self.results[image] = meta
            return meta
        deps = {}
        if image == "pulp-web":
            deps["PULP_MINIMAL_ROOTFS"] = os.path.join(self.image("pulp-minimal")["dir"], "rootfs")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        rootfs = os.path.join(d, "rootfs")
        t0 = time.time()
        log(f"{image}: building ({key})")
        subprocess.run(["cp", "-a", "--reflink=auto", self.base(image), rootfs], check=True)
        env = {**os.environ, **deps, "ROOTFS": rootfs, "OUT": d, "HERE": HERE,
               "PULPCORE_VERSION": self.pulpcore}
        if image == "pulp-minimal":
            env["LOCK_FILE"] = self.lock_file()
        subprocess.run(["bash", "-euo", "pipefail", os.path.join(HERE, "recipes", f"{image}.sh")], check=True, env=env)
        # The recipe leaves image.json: {"tag": ..., "config": {...}}.
        with open(os.path.join(d, "image.json")) as f:
            spec = json.load(f)
        name = f"localhost/{spec.get('repository', image)}:{spec['tag']}"
        t1 = time.time()
        digests = oci.write_archive(rootfs, name, os.path.join(d, "image.tar"), spec["config"])
        meta = {
            "image": image, "name": name, "key": key, "dir": d, "archive": os.path.join(d, "image.tar"),
            **digests,
            "archiveBytes": os.path.getsize(os.path.join(d, "image.tar")),
            "unpackedBytes": du(rootfs),
            "buildSeconds": round(t1 - t0, 1), "archiveSeconds": round(time.time() - t1, 1),
        }
        with open(meta_path, "w") as f:
            json.dump(meta, f, indent=2)
        log(f"{image}: built {name} in {meta['buildSeconds'] + meta['archiveSeconds']:.0f} s")
        self.results[image] = meta
        return meta


def index_update(metas):
    p = os.path.join(CACHE, "index.json")
    idx = {}
    if os.path.exists(p):
        with open(p) as f:
            idx = json.load(f)
    for m in metas:
        idx[m["name"]] = m["dir"]
    with open(p + ".tmp", "w") as f:
        json.dump(idx, f, indent=2, sort_keys=True)
    os.replace(p + ".tmp", p)


def built():
    p = os.path.join(CACHE, "index.json")
    if not os.path.exists(p):
        return []
    with open(p) as f:
        idx = json.load(f)
    out = []
    for name, d in sorted(idx.items()):
        mp = os.path.join(d, "meta.json")
        if os.path.exists(mp):
            with open(mp) as f:
                out.append(json.load(f))
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("images", nargs="*", default=[], help=" ".join(IMAGES + ON_REQUEST))
    b.add_argument("--pulpcore", action="append", help=f"a pulpcore release (repeatable; default {DEFAULT_PULPCORE})")
    b.add_argument("--json", action="store_true", help="print the metadata as JSON")
    i = sub.add_parser("import")
    i.add_argument("--address", required=True, help="containerd socket")
    i.add_argument("--ctr", default="ctr")
    i.add_argument("--namespace", default="k8s.io")
    i.add_argument("names", nargs="*", default=[], help="image names (default: every built image but those built on request)")
    sub.add_parser("list")
    sub.add_parser("base-path")
    a = p.parse_args(argv)
    if a.cmd == "base-path":
        print(base_path())
    elif a.cmd == "build":
        t0 = time.time()
        bad = [x for x in a.images if x not in IMAGES + ON_REQUEST]
        if bad:
            sys.exit(f"unknown image {bad}; choose from {IMAGES + ON_REQUEST}")
        releases = a.pulpcore or [os.environ.get("PULPCORE_VERSION", DEFAULT_PULPCORE)]
        wanted = a.images or IMAGES
        metas = []
        for n, release in enumerate(releases):
            bld = Build(release)
            for img in wanted:
                if n == 0 or img in ("pulp-minimal", "pulp-web"):
                    metas.append(bld.image(img))
                    index_update(metas[-1:])  # a later failure keeps what was built findable
        log(f"done in {time.time() - t0:.1f} s; peak child RSS {peak_rss_kib() // 1024} MiB")
        if a.json:
            print(json.dumps(metas, indent=2))
        else:
            for m in metas:
                print(m["name"])
    elif a.cmd == "list":
        for m in built():
            print(f"{m['name']}\t{m['archive']}\t{m['archiveBytes']}\t{m['unpackedBytes']}")
    elif a.cmd == "import":
        metas = built()
        if not metas:
            sys.exit("nothing built: run build.py build first")
        missing = sorted(set(a.names) - {m["name"] for m in metas})
        if missing:
            sys.exit(f"not built: {' '.join(missing)}; build it: npm run images")
        ctr = [a.ctr, "--address", a.address, "-n", a.namespace, "images"]
        # Real suites run side by side and each imports on start: one import at a time per node (containerd
        # refuses a second writer of the same content), and an image the node has at this digest is skipped.
        with open(f"{a.address}.import.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            listed = subprocess.run(ctr + ["ls"], check=True, capture_output=True, text=True).stdout
            present = {f[0]: f[2] for f in (line.split() for line in listed.splitlines()[1:]) if len(f) > 2}
            named = (m for m in metas if m["name"] in a.names)
            for m in named if a.names else (m for m in metas if m["image"] not in ON_REQUEST):
                if present.get(m["name"]) != m["manifest"]:
                    subprocess.run(ctr + ["import", m["archive"]], check=True)
                print(m["name"])


if __name__ == "__main__":
    main(sys.argv[1:])
