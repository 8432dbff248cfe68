"""Puts the backup backup.sh just took into object storage (S3 API), and keeps the newest KEEP there.

Run by the backup pod's last container, in the Pulp image with the interpreter Pulp runs with: boto3 is
Pulp's own S3 dependency. Writes, under S3_PREFIX in S3_BUCKET, what `npm run backup -- export` writes:
  <id>.tar       the backup without its keys (manifest.json first, members readable by all), which a
                 restore reads from an http(s) URL (a presigned one) through a CDI DataVolume
  <id>.keys.tar  its keys/ alone (members 0600), for `npm run backup -- keys <id> --archive`: apart, so
                 that the URL, the DataVolume and its PVC carry no key, and a bucket policy can keep the
                 keys from whoever may read the archives
  <id>.json      the backup's manifest with the sizes and sha256 of both: what is there, without reading it
The archive is streamed (tar into a multipart upload) with at most IN_MEMORY_PARTS parts buffered (plus the
one being read), fewer when the container's memory limit holds no more; nothing is staged.

`upload.py list` prints, oldest first, one line per <id>.json under the prefix (what `npm run backup --
list` shows of the bucket), and changes nothing.

Env: BACKUP_ROOT, RESULT_FILE (backup.sh's result line), KEEP, S3_BUCKET, S3_PREFIX, S3_ENDPOINT_URL and
S3_REGION (may be empty), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.
"""

import hashlib
import io
import json
import os
import re
import sys
import tarfile
import threading
import time
from typing import Optional

import boto3
from s3transfer.manager import TransferConfig, TransferManager

# <id>.tar, <id>.keys.tar, <id>.json
OBJECT = re.compile(r"^(\d{8}T\d{6}Z)\.(tar|keys\.tar|json)$")
MAX_PARTS = 10_000  # S3's limit on the parts of one multipart upload
# Parts held in memory besides the one being read from the stream. s3transfer's default is 10
# (s3transfer/manager.py@0.19.3, TransferConfig), which boto3's TransferConfig does not expose: with parts
# of size / 9,900, a backup above ~0.8 TiB overran the container's 1 GiB.
IN_MEMORY_PARTS = 2
# The interpreter, boto3 and the tar writer besides the parts (56 MiB measured with
# testbed/bench/upload-memory.sh), with room to spare.
BASELINE = 96 * 2**20
# The container's memory limit as the kernel enforces it: cgroup v2, v1.
MEMORY_LIMIT_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def fail(message: str) -> None:
    print(f"upload: FAILED: {message}", flush=True)
    with open("/dev/termination-log", "w") as log:
        log.write(f"backup upload failed: {message}\n")
    sys.exit(1)


def readable(info: tarfile.TarInfo) -> tarfile.TarInfo:
    # As export's `tar --mode=a+rX`: CDI's importer unpacks as its own uid, keeping the modes.
    info.mode |= 0o444 | (0o111 if info.isdir() or info.mode & 0o111 else 0)
    return info


def private(info: tarfile.TarInfo) -> tarfile.TarInfo:
    # As export's `tar --mode=go-rwx`: whoever unpacks the keys archive gets files only they can read.
    info.mode = 0o700 if info.isdir() else 0o600
    return info


def keys_archive(root: str, backup_id: str) -> bytes:
    """<id>/keys/ as a tar (a few KiB)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        tar.add(f"{root}/{backup_id}/keys", arcname=f"{backup_id}/keys", filter=private)
    return out.getvalue()


def memory_limit() -> Optional[int]:
    """The container's memory limit in bytes; None when unlimited or unknown."""
    for name in MEMORY_LIMIT_FILES:
        try:
            with open(name) as f:
                text = f.read().strip()
        except OSError:
            continue
        return None if text == "max" or int(text) >= 2**62 else int(text)
    return None


def parts_in_memory(size: int, part: int) -> int:
    """IN_MEMORY_PARTS, or 1 when the memory limit holds only that; refuses, before anything is uploaded,
    when not even one fits (past ~4.2 TiB in 1 GiB), rather than be OOMKilled hours into the upload."""
    limit = memory_limit()
    if limit is None:
        return IN_MEMORY_PARTS
    fit = (limit - BASELINE) // part - 1
    if fit < 1:
        fail(
            f"a backup of {size / 2**40:.2f} TiB goes up in parts of {part // 2**20} MiB (S3 allows "
            f"{MAX_PARTS} parts), and the upload holds two of them in memory besides its own "
            f"{BASELINE // 2**20} MiB: {(2 * part + BASELINE) // 2**20} MiB, over its container's memory "
            f"limit of {limit // 2**20} MiB. Nothing was uploaded; the backup itself is in the volume"
        )
    return min(IN_MEMORY_PARTS, fit)


class Hashing:
    """The read end of the tar stream, counted and hashed as boto3 reads it."""

    def __init__(self, raw):
        self.raw, self.sha256, self.bytes = raw, hashlib.sha256(), 0

    def read(self, n: int = -1) -> bytes:
        chunk = self.raw.read(n)
        self.sha256.update(chunk)
        self.bytes += len(chunk)
        return chunk


def client():
    return boto3.client(
        "s3",
        endpoint_url=os.environ.get("S3_ENDPOINT_URL") or None,
        region_name=os.environ.get("S3_REGION") or None,
    )


def backup_ids(s3, bucket: str, prefix: str, ext: tuple[str, ...]) -> set[str]:
    """The ids of the backups under the prefix that have an object with one of these extensions."""
    ids: set[str] = set()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            found = OBJECT.match(obj["Key"][len(prefix) :])
            if found and found[2] in ext:
                ids.add(found[1])
    return ids


def list_manifests() -> None:
    bucket, prefix = os.environ["S3_BUCKET"], os.environ["S3_PREFIX"]
    s3 = client()
    try:
        for backup_id in sorted(backup_ids(s3, bucket, prefix, ("json",))):
            body = s3.get_object(Bucket=bucket, Key=f"{prefix}{backup_id}.json")["Body"].read()
            print(json.dumps(json.loads(body)))
    except Exception as e:
        print(f"cannot list s3://{bucket}/{prefix}: {e}", file=sys.stderr)
        sys.exit(1)


def main() -> None:
    root, bucket, prefix = os.environ["BACKUP_ROOT"], os.environ["S3_BUCKET"], os.environ["S3_PREFIX"]
    keep = int(os.environ["KEEP"])
    with open(os.environ["RESULT_FILE"]) as f:
        result = json.load(f)
    backup_id = result["id"]
    where = f"s3://{bucket}/{prefix}{backup_id}.tar"
    with open(f"{root}/{backup_id}/manifest.json") as f:
        manifest = json.load(f)
    s3 = client()

    # No keys/: they go into <id>.keys.tar, below.
    members = ["manifest.json", "config.json", "database.dump", "artifacts.list"]
    if os.path.isdir(f"{root}/{backup_id}/media"):
        members += ["media.list", "media"]
    # Parts big enough for the whole backup within S3's part limit, as many in memory as the limit holds.
    size = result.get("databaseBytes", 0) + result.get("artifactBytes", 0)
    part = max(16 * 2**20, -(-int(size * 1.05) // (MAX_PARTS - 100)))
    in_memory = parts_in_memory(size, part)
    read_end, write_end = os.pipe()
    written: list[BaseException] = []

    def write_tar() -> None:
        try:
            with os.fdopen(write_end, "wb") as out, tarfile.open(fileobj=out, mode="w|") as tar:
                for member in members:
                    tar.add(f"{root}/{backup_id}/{member}", arcname=f"{backup_id}/{member}", filter=readable)
        except BaseException as e:  # reported after the upload, which then has a short stream
            written.append(e)

    writer = threading.Thread(target=write_tar, daemon=True)
    writer.start()
    # s3transfer's own manager, as boto3's upload_fileobj uses it, for the in-memory bound.
    print(
        f"upload: {where}: parts of {part // 2**20} MiB, {in_memory} in memory besides the one read",
        flush=True,
    )
    body = Hashing(os.fdopen(read_end, "rb"))
    started = time.monotonic()
    config = TransferConfig(
        multipart_chunksize=part,
        max_request_concurrency=in_memory,
        max_in_memory_upload_chunks=in_memory,
    )
    try:
        with TransferManager(s3, config) as transfers:
            transfers.upload(body, bucket, f"{prefix}{backup_id}.tar").result()
    except Exception as e:
        fail(f"{where}: {e}")
    writer.join()
    if written:
        s3.delete_object(Bucket=bucket, Key=f"{prefix}{backup_id}.tar")
        fail(f"{where}: writing the archive failed: {written[0]}")
    seconds = round(time.monotonic() - started, 1)
    archive = {"key": f"{prefix}{backup_id}.tar", "bytes": body.bytes, "sha256": body.sha256.hexdigest()}
    keys = keys_archive(root, backup_id)
    keys_key = f"{prefix}{backup_id}.keys.tar"
    try:
        s3.put_object(Bucket=bucket, Key=keys_key, Body=keys, ContentType="application/x-tar")
    except Exception as e:
        fail(f"s3://{bucket}/{keys_key}: {e}")
    keys_archive_entry = {"key": keys_key, "bytes": len(keys), "sha256": hashlib.sha256(keys).hexdigest()}
    s3.put_object(
        Bucket=bucket,
        Key=f"{prefix}{backup_id}.json",
        Body=json.dumps(
            {**manifest, "archive": archive, "keysArchive": keys_archive_entry}, indent=2
        ).encode(),
        ContentType="application/json",
    )
    print(f"upload: {where}: {body.bytes} bytes in {seconds} s, sha256 {archive['sha256']}", flush=True)
    print(f"upload: s3://{bucket}/{keys_key}: the keys, {len(keys)} bytes", flush=True)

    # Retention: the newest KEEP backups under the prefix (archive, keys and manifest) stay.
    for old in sorted(backup_ids(s3, bucket, prefix, ("tar", "keys.tar", "json")), reverse=True)[keep:]:
        s3.delete_objects(
            Bucket=bucket,
            Delete={"Objects": [{"Key": f"{prefix}{old}.{ext}"} for ext in ("tar", "keys.tar", "json")]},
        )
        print(f"upload: retention: removed s3://{bucket}/{prefix}{old}", flush=True)

    placed = {
        "url": where,
        "bytes": body.bytes,
        "sha256": archive["sha256"],
        "seconds": seconds,
        "keys": f"s3://{bucket}/{keys_key}",
    }
    line = json.dumps({**result, "s3": placed})
    with open("/dev/termination-log", "w") as log:
        log.write(line + "\n")
    print(line, flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["list"]:
        list_manifests()
    else:
        main()
