#!/usr/bin/env python3
"""Writes an OCI image archive (oci-layout tar) from a root filesystem directory.

Python 3 standard library only. The output is deterministic: entries are sorted, every mtime is fixed,
owners are numeric, the gzip header carries no name or time, and the config's `created` is fixed. So
the same rootfs and the same config give the same digests. The archive is what `ctr images import`
reads: `oci-layout`, `index.json` (the manifest descriptor carries `io.containerd.image.name` and
`org.opencontainers.image.ref.name`), and `blobs/sha256/*`.

    oci.py write --rootfs DIR --name localhost/x:1 --out x.tar [--config-json FILE] [--epoch N]

--config-json holds the image config's `config` object (Env, Entrypoint, Cmd, User, WorkingDir,
Labels, ExposedPorts, StopSignal), as in the OCI image spec.
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import stat
import sys
import tarfile

# Paths whose contents never belong in an image (the runtime mounts them); the directories stay.
EMPTY_DIRS = {"dev", "proc", "sys", "run"}
# 2023-06-10T00:00:00Z (bookworm's release day): mtimes of every entry, and `created`.
DEFAULT_EPOCH = 1686355200


class _HashingSink(io.RawIOBase):
    """A write-only file that hashes and counts what passes through and forwards it."""

    def __init__(self, target):
        self.target = target
        self.sha = hashlib.sha256()
        self.size = 0

    def writable(self):
        return True

    def write(self, b):
        self.sha.update(b)
        self.size += len(b)
        if self.target is not None:
            self.target.write(b)
        return len(b)


def _walk(root):
    """Relative paths under root, sorted so that a directory comes before its entries."""
    out = []

    def rec(rel):
        full = os.path.join(root, rel) if rel else root
        for name in sorted(os.listdir(full)):
            r = f"{rel}/{name}" if rel else name
            out.append(r)
            p = os.path.join(root, r)
            if stat.S_ISDIR(os.lstat(p).st_mode) and not (rel == "" and name in EMPTY_DIRS):
                rec(r)

    rec("")
    return out


def write_layer(rootfs, fileobj, epoch, compress=True):
    """Writes the tar layer of rootfs to fileobj; returns (diff_id, digest, size)."""
    outer = _HashingSink(fileobj)
    # Level 1: about a third of level 6's time for a slightly larger archive; the CPU is what a cold build lacks.
    gz = gzip.GzipFile(filename="", mode="wb", fileobj=outer, mtime=0, compresslevel=1) if compress else None
    inner = _HashingSink(gz if gz else outer)
    buffered = io.BufferedWriter(inner, buffer_size=1 << 20)
    tar = tarfile.open(fileobj=buffered, mode="w|", format=tarfile.PAX_FORMAT)
    for rel in _walk(rootfs):
        path = os.path.join(rootfs, rel)
        ti = tar.gettarinfo(path, arcname=rel)  # tracks inodes: a second link becomes LNKTYPE
        if ti is None:  # sockets
            continue
        ti.mtime = epoch
        ti.uname = ti.gname = ""
        ti.pax_headers = {}
        if ti.isreg():
            with open(path, "rb") as f:
                tar.addfile(ti, f)
        else:
            tar.addfile(ti)
    tar.close()
    buffered.flush()
    if gz:
        gz.close()
    diff_id = "sha256:" + inner.sha.hexdigest()
    digest = "sha256:" + outer.sha.hexdigest()
    return diff_id, digest, outer.size


def _blob(tar, data, epoch):
    digest = hashlib.sha256(data).hexdigest()
    ti = tarfile.TarInfo(f"blobs/sha256/{digest}")
    ti.size, ti.mtime, ti.mode = len(data), epoch, 0o644
    tar.addfile(ti, io.BytesIO(data))
    return "sha256:" + digest, len(data)


def _canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def write_archive(rootfs, name, out, config, epoch=DEFAULT_EPOCH, compress=True, tmpdir=None):
    """Writes the archive; returns {"manifest": digest, "config": digest, "layer": {...}}."""
    ref = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else "latest"
    layer_tmp = out + ".layer.tmp"
    with open(layer_tmp, "wb") as lf:
        diff_id, layer_digest, layer_size = write_layer(rootfs, lf, epoch, compress)
    created = __import__("datetime").datetime.fromtimestamp(epoch, __import__("datetime").timezone.utc)
    image_config = {
        "architecture": "amd64",
        "os": "linux",
        "created": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "config": config,
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": created.strftime("%Y-%m-%dT%H:%M:%SZ"), "created_by": "testbed/images"}],
    }
    tmp_out = out + ".tmp"
    with tarfile.open(tmp_out, "w", format=tarfile.PAX_FORMAT) as tar:
        for d in ("blobs", "blobs/sha256"):
            ti = tarfile.TarInfo(d)
            ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, epoch
            tar.addfile(ti)
        ti = tarfile.TarInfo(f"blobs/sha256/{layer_digest.split(':')[1]}")
        ti.size, ti.mtime, ti.mode = layer_size, epoch, 0o644
        with open(layer_tmp, "rb") as lf:
            tar.addfile(ti, lf)
        config_digest, config_size = _blob(tar, _canonical(image_config), epoch)
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": config_digest,
                "size": config_size,
            },
            "layers": [
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar" + ("+gzip" if compress else ""),
                    "digest": layer_digest,
                    "size": layer_size,
                }
            ],
        }
        manifest_digest, manifest_size = _blob(tar, _canonical(manifest), epoch)
        index = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [
                {
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "digest": manifest_digest,
                    "size": manifest_size,
                    "platform": {"architecture": "amd64", "os": "linux"},
                    "annotations": {
                        "io.containerd.image.name": name,
                        "org.opencontainers.image.ref.name": ref,
                    },
                }
            ],
        }
        for fname, data in (
            ("oci-layout", _canonical({"imageLayoutVersion": "1.0.0"})),
            ("index.json", _canonical(index)),
        ):
            ti = tarfile.TarInfo(fname)
            ti.size, ti.mtime, ti.mode = len(data), epoch, 0o644
            tar.addfile(ti, io.BytesIO(data))
    os.unlink(layer_tmp)
    os.replace(tmp_out, out)
    return {
        "manifest": manifest_digest,
        "config": config_digest,
        "layer": {"digest": layer_digest, "diffId": diff_id, "size": layer_size},
    }


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("--rootfs", required=True)
    w.add_argument("--name", required=True, help="image reference, e.g. localhost/redis:7.0.15-1_deb12u4")
    w.add_argument("--out", required=True)
    w.add_argument("--config-json", help="file with the image config's `config` object")
    w.add_argument("--epoch", type=int, default=int(os.environ.get("SOURCE_DATE_EPOCH", DEFAULT_EPOCH)))
    w.add_argument("--no-compress", action="store_true")
    a = p.parse_args(argv)
    config = {}
    if a.config_json:
        with open(a.config_json) as f:
            config = json.load(f)
    res = write_archive(a.rootfs, a.name, a.out, config, a.epoch, not a.no_compress)
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
