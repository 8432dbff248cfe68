#!/usr/bin/env python3
"""Writes a root filesystem directory as a one-layer OCI image archive that
`ctr images import` reads (no registry, no daemon, standard library only).

  oci-archive.py --rootfs DIR --name localhost/NAME:TAG --out FILE.tar
                 [--entrypoint '["/bin/sh"]'] [--cmd '[...]'] [--user UID:GID]
                 [--env K=V]... [--workdir DIR] [--label K=V]...

The layer is an uncompressed tar of DIR, entries sorted, owners and modes kept, so the same tree
gives the same digests. The manifest carries `io.containerd.image.name` (the name ctr imports it
under) and `org.opencontainers.image.ref.name` (the tag).
"""

import argparse
import hashlib
import io
import json
import os
import sys
import tarfile


def layer_tar(rootfs: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for dirpath, dirnames, filenames in os.walk(rootfs):
            dirnames.sort()
            for name in sorted(dirnames + filenames):
                path = os.path.join(dirpath, name)
                info = tar.gettarinfo(path, arcname=os.path.relpath(path, rootfs))
                info.uname = info.gname = ""
                if info.isreg():
                    with open(path, "rb") as f:
                        tar.addfile(info, f)
                else:
                    tar.addfile(info)
    return buf.getvalue()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rootfs", required=True)
    p.add_argument("--name", required=True, help="full reference, e.g. localhost/testbed-pause:v1.34.3")
    p.add_argument("--out", required=True)
    p.add_argument("--entrypoint", type=json.loads)
    p.add_argument("--cmd", type=json.loads)
    p.add_argument("--user")
    p.add_argument("--workdir")
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--label", action="append", default=[])
    p.add_argument("--arch", default="amd64")
    a = p.parse_args()
    if not os.path.isdir(a.rootfs):
        print(f"oci-archive: --rootfs {a.rootfs!r} is not a directory", file=sys.stderr)
        return 1
    tag = a.name.rsplit(":", 1)[1] if ":" in a.name.rsplit("/", 1)[-1] else "latest"

    blobs: dict[str, bytes] = {}

    def blob(data: bytes, media_type: str, **extra) -> dict:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        return {"mediaType": media_type, "digest": digest, "size": len(data), **extra}

    def canon(obj) -> bytes:
        return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()

    layer = layer_tar(a.rootfs)
    layer_desc = blob(layer, "application/vnd.oci.image.layer.v1.tar")
    config = {"Env": a.env or ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}
    for key, value in (("Entrypoint", a.entrypoint), ("Cmd", a.cmd), ("User", a.user), ("WorkingDir", a.workdir)):
        if value is not None:
            config[key] = value
    if a.label:
        config["Labels"] = dict(kv.split("=", 1) for kv in a.label)
    image_config = {
        "architecture": a.arch,
        "os": "linux",
        "config": config,
        "rootfs": {"type": "layers", "diff_ids": [layer_desc["digest"]]},
        "history": [{"created_by": "testbed oci-archive.py"}],
    }
    config_desc = blob(canon(image_config), "application/vnd.oci.image.config.v1+json")
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": config_desc,
        "layers": [layer_desc],
    }
    manifest_desc = blob(
        canon(manifest),
        "application/vnd.oci.image.manifest.v1+json",
        annotations={"io.containerd.image.name": a.name, "org.opencontainers.image.ref.name": tag},
        platform={"architecture": a.arch, "os": "linux"},
    )
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [manifest_desc]}

    tmp = a.out + ".tmp"
    with tarfile.open(tmp, mode="w", format=tarfile.PAX_FORMAT) as out:

        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            out.addfile(info, io.BytesIO(data))

        add("oci-layout", canon({"imageLayoutVersion": "1.0.0"}))
        add("index.json", canon(index))
        for digest, data in sorted(blobs.items()):
            add("blobs/sha256/" + digest.split(":", 1)[1], data)
    os.replace(tmp, a.out)
    print(manifest_desc["digest"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
