"""Checks, before a restore changes anything, that every artifact the backup's database references will be
there once it is restored. Run by the restore Job's first container, in the Pulp image (boto3 is Pulp's own
S3 dependency); restore.sh, which changes things, runs only after it passed.

- A backup of a volume install carries its artifacts (media/), and restore.sh copies them into this
  install's volume. Into an install that keeps its artifacts in object storage nothing would be copied:
  refused.
- A backup of an object-storage install carries none: its artifacts must already be in this install's
  bucket. Into a volume install they would all be missing: refused. Into a bucket, every referenced key
  must be there (orphan cleanup deletes objects after the backup was taken, and a restore would reference
  them again): refused, naming the first missing ones, when any is not. A bucket other than the backup's
  is accepted when it holds them all (the objects were copied over); the log says so.

Env: BACKUP_DIR; TARGET_STORAGE ("pvc" or "s3://<bucket>", backup.ts storageName); for s3 S3_ENDPOINT_URL
and S3_REGION (may be empty), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.
"""

import json
import os
import sys


def log(message: str) -> None:
    print(f"artifact check: {message}", flush=True)


def refuse(message: str) -> None:
    log(f"REFUSED: {message}")
    with open(os.environ.get("TERMINATION_LOG", "/dev/termination-log"), "w") as out:
        out.write(f"restore refused: {message}\n")
    sys.exit(1)


def backup_storage(backup_dir: str, manifest: dict) -> str:
    """ "pvc" or "s3://<bucket>". Backups before format 2's storage names wrote "s3 (not in the backup: ...)":
    their bucket is in the config they were taken with."""
    storage = manifest.get("artifacts", {}).get("storage", "")
    if storage == "pvc" or storage.startswith("s3://"):
        return storage
    if storage.startswith("s3"):
        with open(os.path.join(backup_dir, "config.json")) as f:
            bucket = json.load(f).get("storage", {}).get("s3", {}).get("bucket")
        return f"s3://{bucket}" if bucket else "s3://(unknown bucket)"
    refuse(f"the backup's manifest names no artifact storage it knows ({json.dumps(storage)})")
    return ""


def referenced(backup_dir: str):
    """The artifact names the backup's database references, sorted bytewise (backup.sh sorts with LC_ALL=C)."""
    with open(os.path.join(backup_dir, "artifacts.list")) as f:
        for line in f:
            name = line.rstrip("\n")
            if name:
                yield name


def bucket_keys(bucket: str, prefix: str):
    """Every key under the prefix, in S3's order (bytewise, as artifacts.list)."""
    import boto3
    from botocore.config import Config

    s3 = boto3.client(
        "s3",
        endpoint_url=os.environ.get("S3_ENDPOINT_URL") or None,
        region_name=os.environ.get("S3_REGION") or None,
        # As Pulp's own storage settings (settings/render.ts).
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
    )
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            yield obj["Key"]


def missing_in_bucket(backup_dir: str, bucket: str) -> tuple[int, list[str], int, int]:
    """(referenced, first missing names, missing, objects not referenced): one listing, merged with the
    sorted list in one pass, so memory stays flat whatever the number of artifacts."""
    names = list(referenced(backup_dir))
    if not names:
        return 0, [], 0, 0
    prefix = os.path.commonprefix([names[0], names[-1]])
    prefix = prefix[: prefix.rfind("/") + 1]
    keys = bucket_keys(bucket, prefix)
    key = next(keys, None)
    first: list[str] = []
    missing = extra = 0
    for name in names:
        while key is not None and key < name:
            extra += 1
            key = next(keys, None)
        if key == name:
            key = next(keys, None)
            continue
        missing += 1
        if len(first) < 3:
            first.append(name)
    extra += sum(1 for _ in keys) + (key is not None)
    return len(names), first, missing, extra


def main() -> None:
    backup_dir, target = os.environ["BACKUP_DIR"], os.environ["TARGET_STORAGE"]
    with open(os.path.join(backup_dir, "manifest.json")) as f:
        manifest = json.load(f)
    backup_id, source = manifest.get("id", "?"), backup_storage(backup_dir, manifest)
    files = manifest.get("artifacts", {}).get("files", 0)
    what = f"backup {backup_id} was taken of an install whose artifacts are in {source}"

    if source == "pvc" and target != "pvc":
        refuse(
            f"{what} (the backup holds them, {files} files), and this install keeps its artifacts in {target}: "
            "a restore copies artifacts into a volume only, so every one would be missing. Nothing was changed. "
            "Restore it into an install with a volume for its artifacts: pulumi config rm pulp:storage"
        )
    if source != "pvc" and target == "pvc":
        bucket = source[len("s3://") :]
        refuse(
            f"{what} (the backup holds none of them), and this install keeps its artifacts on a volume: "
            "every one would be missing. Nothing was changed. Restore it into an install that reads that "
            f"bucket: pulumi config set --path pulp:storage.s3.bucket {bucket} (with the endpointUrl, region "
            "and accessKeyId of the install it was taken of), then pulumi up"
        )
    if target == "pvc":
        log(f"backup {backup_id} holds its artifacts ({files} files); restore.sh copies them into the volume")
        return

    bucket = target[len("s3://") :]
    total, first, missing, extra = missing_in_bucket(backup_dir, bucket)
    if missing:
        moved = "" if source == target else f" (the backup was taken with {source})"
        refuse(
            f"{missing} of the {total} artifacts backup {backup_id} references are not in {target}{moved} "
            f"(first: {' '.join(first)}): the restored Pulp would reference objects that are gone, for good "
            "where they were uploaded. Nothing was changed. Objects deleted since the backup (orphan cleanup) "
            "come back from the bucket's own versions or backup: restore them, then pulumi up again"
            + (f"; or copy the objects over first (aws s3 sync {source} {target})" if source != target else "")
        )
    log(
        f"all {total} artifacts backup {backup_id} references are in {target}"
        + ("" if source == target else f" (the backup was taken with {source})")
        + (f"; {extra} objects there are not referenced by it and stay (Pulp never deletes them)" if extra else "")
    )


if __name__ == "__main__":
    main()
