"""Fetches a backup's archive from object storage (S3 API) into the restore's volume: pulp:restore.s3.

Run by the restore's fetch Job in the Pulp image with Pulp's interpreter (boto3 is Pulp's own S3
dependency). Reads what upload.py wrote under the prefix: <id>.json (the manifest, with the archive's size
and sha256) and <id>.tar (the backup without its keys), streamed from the bucket and unpacked as it comes,
so the volume needs room for the backup once and the container holds one chunk at a time. The bucket's
credentials come from a Secret: no URL that grants access is written anywhere.

The backup lands in DEST/<id>/ only once it is whole and its sha256 is the manifest's; until then it is
DEST/.partial-<id>/, which the next attempt starts over.

Env: BACKUP_ID, DEST, S3_BUCKET, S3_KEY (<prefix><id>.tar), S3_ENDPOINT_URL and S3_REGION (may be empty),
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; TERMINATION_LOG (default /dev/termination-log).
"""

import hashlib
import json
import os
import shutil
import sys
import tarfile
import time

import boto3
from botocore.exceptions import ClientError

CHUNK = 1 << 20


def fail(message: str) -> None:
    print(f"fetch: FAILED: {message}", flush=True)
    with open(os.environ.get("TERMINATION_LOG", "/dev/termination-log"), "w") as log:
        log.write(f"restore fetch failed: {message}\n")
    sys.exit(1)


class Hashing:
    """The object's body, counted and hashed as tarfile reads it."""

    def __init__(self, raw):
        self.raw, self.sha256, self.bytes = raw, hashlib.sha256(), 0

    def read(self, n: int = -1) -> bytes:
        chunk = self.raw.read(n if n >= 0 else None)
        self.sha256.update(chunk)
        self.bytes += len(chunk)
        return chunk

    def drain(self) -> None:
        """Reads what tarfile left (the archive's end padding): the sha256 is of the whole object."""
        while self.read(CHUNK):
            pass


def error_code(e: ClientError) -> str:
    return str(e.response.get("Error", {}).get("Code", ""))


def backups_under(s3, bucket: str, prefix: str) -> list[str]:
    """The backup ids with an archive under the prefix, oldest first (what the fix can name)."""
    ids = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            name = obj["Key"][len(prefix) :]
            if name.endswith(".tar") and not name.endswith(".keys.tar") and "/" not in name:
                ids.append(name[: -len(".tar")])
    return sorted(ids)


def safe_members(tar: tarfile.TarFile, backup_id: str):
    """Each member, refused unless it is a file or directory under <id>/ (the archive is data, not trusted
    to write elsewhere in the volume)."""
    for member in tar:
        parts = member.name.split("/")
        if parts[0] != backup_id or ".." in parts or member.name.startswith("/"):
            fail(f"the archive holds {member.name!r}, outside {backup_id}/: not a backup of this id")
        if not (member.isfile() or member.isdir()):
            fail(f"the archive holds {member.name!r}, which is neither a file nor a directory")
        yield member


def unpack(body: Hashing, backup_id: str, partial: str) -> int:
    """Unpacks the stream into partial/; returns the number of files."""
    files = 0
    with tarfile.open(fileobj=body, mode="r|") as tar:
        for member in safe_members(tar, backup_id):
            target = os.path.join(partial, member.name)
            if member.isdir():
                os.makedirs(target, mode=0o755, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
            source = tar.extractfile(member)
            with open(target, "wb") as out:
                shutil.copyfileobj(source, out, CHUNK)
            # Readable by the restore's own uid whatever it is, as upload.py packed it.
            os.chmod(target, 0o644)
            files += 1
    body.drain()
    return files


def main() -> None:
    backup_id, dest = os.environ["BACKUP_ID"], os.environ["DEST"]
    bucket, key = os.environ["S3_BUCKET"], os.environ["S3_KEY"]
    prefix = key[: -len(f"{backup_id}.tar")]
    where = f"s3://{bucket}/{key}"
    final, partial = os.path.join(dest, backup_id), os.path.join(dest, f".partial-{backup_id}")
    if os.path.isfile(os.path.join(final, "manifest.json")):
        print(f"fetch: {final} is there from an earlier attempt", flush=True)
        return
    shutil.rmtree(partial, ignore_errors=True)
    s3 = boto3.client(
        "s3",
        endpoint_url=os.environ.get("S3_ENDPOINT_URL") or None,
        region_name=os.environ.get("S3_REGION") or None,
    )

    # The manifest first: the archive's sha256, and whether the volume has room for it.
    try:
        manifest = json.loads(s3.get_object(Bucket=bucket, Key=f"{prefix}{backup_id}.json")["Body"].read())
    except ClientError as e:
        if error_code(e) not in ("NoSuchKey", "404"):
            fail(f"s3://{bucket}/{prefix}{backup_id}.json: {e} (check pulp:restore.s3's accessKeyId and pulp:restoreS3SecretAccessKey)")
        try:
            there = backups_under(s3, bucket, prefix)
        except ClientError as listing:
            fail(f"s3://{bucket}/{prefix}{backup_id}.json does not exist, and listing the prefix failed: {listing}")
        fail(
            f"s3://{bucket}/{prefix}{backup_id}.json does not exist: no backup {backup_id} under that prefix. "
            + (
                f"The backups there: {', '.join(there)}. Pick one: pulumi config set --path pulp:restore.backup {there[-1]}"
                if there
                else "There is none under it: pulp:restore.s3.prefix names where the backups are (backup.s3.prefix of "
                "the install that took them; its default is <namespace>/<instance>/ of that install), such as "
                "pulumi config set --path pulp:restore.s3.prefix pulp/pulp/"
            )
        )
    archive = manifest.get("archive") or {}
    want = archive.get("sha256")
    free = shutil.disk_usage(dest).free
    if archive.get("bytes", 0) > free:
        need_gi = -(-archive["bytes"] * 11 // 10 // 2**30)
        fail(
            f"the backup is {archive['bytes']} bytes and its volume has {free} free: make it larger, such as "
            f"pulumi config set --path pulp:restore.s3.size {need_gi}Gi (the volume {os.environ.get('CLAIM', '')} "
            "is kept: delete it first, kubectl delete pvc, or give the restore a new one)"
        )

    os.makedirs(partial)
    started = time.monotonic()
    try:
        body = Hashing(s3.get_object(Bucket=bucket, Key=key)["Body"])
        files = unpack(body, backup_id, partial)
    except ClientError as e:
        fail(f"{where}: {e}")
    except (tarfile.TarError, OSError) as e:
        fail(f"{where}: unpacking failed: {e}")
    got = body.sha256.hexdigest()
    if want and got != want:
        fail(f"{where} has sha256 {got}, but its manifest says {want}: the archive is damaged or was replaced")
    if not os.path.isfile(os.path.join(partial, backup_id, "manifest.json")):
        fail(f"{where} holds no {backup_id}/manifest.json: not a backup archive")
    os.rename(os.path.join(partial, backup_id), final)
    os.rmdir(partial)
    result = {
        "fetched": where,
        "bytes": body.bytes,
        "files": files,
        "sha256": got,
        "verified": bool(want),
        "seconds": round(time.monotonic() - started, 1),
    }
    line = json.dumps(result)
    with open(os.environ.get("TERMINATION_LOG", "/dev/termination-log"), "w") as log:
        log.write(line + "\n")
    print(line, flush=True)


if __name__ == "__main__":
    main()
