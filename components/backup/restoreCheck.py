"""Checks, before a restore changes anything, that the backup fits this install: that the image can migrate
the backup's database, and that every artifact the database references will be there once it is restored.
Run by the restore Job's first container, in the Pulp image (its installed releases are the target's; boto3
is Pulp's own S3 dependency); restore.sh, which changes things, runs only after it passed.

Releases, by the upgrade planner's own tables (RESTORE_RULES, from components/upgrade/migrations.ts): for
each Pulp package the backup and the image both name, the backup's release must not be newer than the
image's (its schema may hold migrations the image does not know), and must not be older than a squash the
image no longer carries (the planner's waypoints: `migrate` would fail with InconsistentMigrationHistory).
A package of the backup the image lacks is refused: its tables would be left unmigrated and unused.

- A backup of a volume install carries its artifacts (media/), and restore.sh copies them into this
  install's volume. Into an install that keeps its artifacts in object storage nothing would be copied:
  refused.
- A backup of an object-storage install carries none: its artifacts must already be in this install's
  bucket. Into a volume install they would all be missing: refused. Into a bucket, every referenced key
  must be there (orphan cleanup deletes objects after the backup was taken, and a restore would reference
  them again): refused, naming the first missing ones, when any is not. A bucket other than the backup's
  is accepted when it holds them all (the objects were copied over); the log says so.

A pulp-operator PulpBackup (pulp.db, pulp/, its Secrets as YAML, no manifest.json) is checked apart: file
storage only, complete, and made with the keys this install runs with (KEYS_DIR: a restore reads the keys
from the stack config, and a PulpBackup's are in its files).

An Azure Blob container (azure://<account>/<container>[/<location>]) is checked as a bucket is, through
azure-storage-blob (Pulp's own Azure dependency); a Google Cloud Storage bucket (gs://<bucket>[/<location>])
through google-cloud-storage (Pulp's own Google dependency), with the key GOOGLE_APPLICATION_CREDENTIALS
names and the endpoint API_ENDPOINT_OVERRIDE names, when set.

Env: BACKUP_DIR; RESTORE_RULES (JSON: packages, waypoints); KEYS_DIR and PULP_BACKUP_KEYS (JSON: keyFile, file, key; PulpBackups); TARGET_STORAGE ("pvc", "s3://<bucket>", "azure://..." or "gs://...", backup.ts storageName); for s3 S3_ENDPOINT_URL
and S3_REGION (may be empty), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; for azure AZURE_CONNECTION_STRING.
"""

import importlib.metadata
import json
import os
import re
import sys


def log(message: str) -> None:
    print(f"artifact check: {message}", flush=True)


def refuse(message: str) -> None:
    log(f"REFUSED: {message}")
    with open(os.environ.get("TERMINATION_LOG", "/dev/termination-log"), "w") as out:
        out.write(f"restore refused: {message}\n")
    sys.exit(1)


def version(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text.split("+")[0])[:3])


def installed() -> dict[str, str]:
    """The image's Pulp distributions as the backup's manifest names them (backup.ts VERSIONS_SCRIPT)."""
    names = {}
    for d in importlib.metadata.distributions():
        name = (d.metadata["Name"] or "").lower().replace("_", "-")
        if name.startswith("pulp"):
            names[name] = d.version
    return names


def check_releases(backup_id: str, backup: dict[str, str], image: dict[str, str], rules: dict) -> None:
    known = set(rules["packages"])
    for package in sorted(known & set(backup)):
        if package not in image:
            refuse(
                f"backup {backup_id} holds {package} {backup[package]}'s data, and this install's image has no "
                f"{package}: restore it with an image that carries {package} {backup[package]} or later "
                "(pulumi config set pulp:image <that image>)"
            )
        if version(backup[package]) > version(image[package]):
            refuse(
                f"backup {backup_id} is from {package} {backup[package]}, newer than this install's "
                f"{image[package]}: its database may hold migrations this image does not know. Restore it with "
                f"an image that carries {package} {backup[package]} or later (pulumi config set pulp:image <that image>)"
            )
    for w in rules["waypoints"]:
        have, want = backup.get(w["package"]), image.get(w["package"])
        if have is None or want is None:
            continue
        if version(want) >= version(w["purgedIn"]) and version(have) < version(w["squashedIn"]):
            refuse(
                f"backup {backup_id} is from {w['package']} {have}, and this install's {want} no longer carries "
                f"the migrations {w['app']}'s squash replaced ({w['package']} {w['purgedIn']} deleted them): "
                f"`migrate` would fail (InconsistentMigrationHistory). Restore it with {w['package']} "
                f"{w['stopAt']} first (pulumi config set pulp:image <the image of {w['stopAt']}>), then upgrade"
            )
    unchecked = sorted(set(backup) - known)
    log(
        "releases: "
        + ", ".join(f"{p} {backup[p]} -> {image.get(p, '?')}" for p in sorted(known & set(backup)))
        + (f"; not checked: {', '.join(unchecked)}" if unchecked else "")
    )


def backup_storage(backup_dir: str, manifest: dict) -> str:
    """ "pvc", "s3://<bucket>" or "azure://...". Backups before format 2's storage names wrote "s3 (not in the
    backup: ...)": their bucket is in the config they were taken with."""
    storage = manifest.get("artifacts", {}).get("storage", "")
    if storage == "pvc" or storage.startswith(("s3://", "azure://", "gs://")):
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


def azure_parts(name: str) -> tuple[str, str, str]:
    """(account, container, location) of "azure://<account>/<container>[/<location>]"; location may be ""."""
    account, _, rest = name[len("azure://") :].partition("/")
    container, _, location = rest.partition("/")
    return account, container, location


def container_keys(target: str, prefix: str):
    """Every blob name under the prefix in the Azure container TARGET_STORAGE names, without its location,
    in the service's order (lexicographic by UTF-8 bytes, as artifacts.list)."""
    from azure.storage.blob import ContainerClient

    _, container, location = azure_parts(target)
    root = f"{location}/" if location else ""
    client = ContainerClient.from_connection_string(os.environ["AZURE_CONNECTION_STRING"], container)
    for blob in client.list_blobs(name_starts_with=root + prefix):
        yield blob.name[len(root) :]


def gcs_parts(name: str) -> tuple[str, str]:
    """(bucket, location) of "gs://<bucket>[/<location>]"; location may be ""."""
    bucket, _, location = name[len("gs://") :].partition("/")
    return bucket, location


def gcs_keys(target: str, prefix: str):
    """Every object name under the prefix in the GCS bucket TARGET_STORAGE names, without its location, in
    the service's order (lexicographic by UTF-8 bytes, as artifacts.list)."""
    from google.cloud import storage

    bucket, location = gcs_parts(target)
    root = f"{location}/" if location else ""
    for blob in storage.Client().list_blobs(bucket, prefix=root + prefix):
        yield blob.name[len(root) :]


def store_keys(target: str, prefix: str):
    """Every key under the prefix in the target's bucket or container."""
    if target.startswith("azure://"):
        return container_keys(target, prefix)
    if target.startswith("gs://"):
        return gcs_keys(target, prefix)
    return bucket_keys(target[len("s3://") :], prefix)


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


def missing_in_store(backup_dir: str, target: str) -> tuple[int, list[str], int, int]:
    """(referenced, first missing names, missing, objects not referenced): one listing, merged with the
    sorted list in one pass, so memory stays flat whatever the number of artifacts."""
    names = list(referenced(backup_dir))
    if not names:
        return 0, [], 0, 0
    prefix = os.path.commonprefix([names[0], names[-1]])
    prefix = prefix[: prefix.rfind("/") + 1]
    keys = store_keys(target, prefix)
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


def operator_key(backup_dir: str, file: str, key: str) -> str | None:
    import base64

    import yaml

    try:
        with open(os.path.join(backup_dir, file)) as f:
            doc = yaml.safe_load(f) or {}
    except FileNotFoundError:
        return None
    if doc.get("kind") == "Secret":
        if key in (doc.get("stringData") or {}):
            return str(doc["stringData"][key])
        value = (doc.get("data") or {}).get(key)
        return None if value is None else base64.b64decode(value).decode()
    value = doc.get(key)
    return None if value is None else str(value)


def check_operator_backup(backup_id: str, backup_dir: str, target: str) -> None:
    """A PulpBackup's directory: its dump (pulp.db), its copy of /var/lib/pulp (pulp/) when the install kept
    its artifacts on a volume, and its Secrets as YAML files. It names no releases: the migration Job
    (preMigrate.py) refuses a database a newer release migrated, before any Pulp process starts."""
    if os.path.exists(os.path.join(backup_dir, "objectstorage_secret.yaml")):
        refuse(
            f"PulpBackup {backup_id} is of an install that keeps its artifacts in object storage: this restore "
            "loads PulpBackups of file storage only (their pulp/ directory). Nothing was changed. Take that "
            "install over in place instead, with its bucket (docs/migrate-from-pulp-operator.md), then "
            "pulumi config rm pulp:restore"
        )
    if not os.path.isdir(os.path.join(backup_dir, "pulp")):
        refuse(
            f"PulpBackup {backup_id} has no pulp/ directory (the copy of /var/lib/pulp the operator makes last): "
            "it did not finish. Nothing was changed. Restore a PulpBackup whose status says BackupComplete"
        )
    if target != "pvc":
        refuse(
            f"PulpBackup {backup_id} holds its artifacts in pulp/media, and this install keeps its artifacts in "
            f"{target}: a restore copies artifacts into a volume only, so every one would be missing. Nothing was "
            "changed. Restore it into an install with a volume for its artifacts: pulumi config rm pulp:storage"
        )
    dump = os.path.join(backup_dir, "pulp.db")
    if not os.access(dump, os.R_OK):
        refuse(
            f"PulpBackup {backup_id}'s pulp.db is not readable by the restore (uid {os.getuid()}): pulp-operator "
            "writes it with mode 0600. Nothing was changed. Make it readable from a pod that mounts the claim "
            f"(chmod a+r <mount>/{backup_id}/pulp.db), or bring the PulpBackup in as a tar made with "
            "--mode=a+rX (pulp:restore.http, docs/migrate-from-pulp-operator.md)"
        )
    # Each key a restore needs: the Secret file the operator copies it into, its key there, and this install's
    # key file in KEYS_DIR (components/backup/backupIds.ts PULP_BACKUP_KEYS, restore.ts pulpBackupKeyFiles).
    keys_dir = os.environ["KEYS_DIR"]
    for entry in json.loads(os.environ["PULP_BACKUP_KEYS"]):
        name, file, key = entry["keyFile"], entry["file"], entry["key"]
        want = operator_key(backup_dir, file, key)
        if want is None:
            refuse(f"PulpBackup {backup_id} has no {key} in {file}: it is incomplete. Nothing was changed")
        with open(os.path.join(keys_dir, name)) as f:
            have = f.read()
        # pulumi config set drops one trailing newline from what it reads on stdin (npm run backup -- keys).
        if have.rstrip("\n") != want.rstrip("\n"):
            refuse(
                f"this install's {name} is not PulpBackup {backup_id}'s ({file}): with another one the restored "
                "encrypted fields, sessions or the admin login would not work. Nothing was changed. Set them from "
                f"the backup: npm run backup -- keys {backup_id} --archive <a tar of its directory> (or -n <namespace> "
                "--claim <its claim>)"
            )
    media = os.path.join(backup_dir, "pulp", "media")
    files = sum(len(f) for _, _, f in os.walk(media)) if os.path.isdir(media) else 0
    log(
        f"PulpBackup {backup_id} (pulp-operator): the keys are this install's; it holds {files} files under "
        "pulp/media, which restore.sh copies into the volume; it names no releases (the migration Job checks "
        "the restored database before any Pulp process starts)"
    )


def copy_command(source: str, target: str) -> str:
    """How objects get from one store to another, as far as one command says it."""
    if source.startswith("s3://") and target.startswith("s3://"):
        return f"aws s3 sync {source} {target}"
    if source.startswith("gs://") and target.startswith("gs://"):
        return f"gcloud storage rsync --recursive {source} {target}"
    return f"azcopy, rclone or the stores' own tools, from {source} to {target}"


def main() -> None:
    backup_dir, target = os.environ["BACKUP_DIR"], os.environ["TARGET_STORAGE"]
    if not os.path.exists(os.path.join(backup_dir, "manifest.json")) and os.path.exists(
        os.path.join(backup_dir, "pulp.db")
    ):
        check_operator_backup(os.path.basename(backup_dir), backup_dir, target)
        return
    with open(os.path.join(backup_dir, "manifest.json")) as f:
        manifest = json.load(f)
    backup_id, source = manifest.get("id", "?"), backup_storage(backup_dir, manifest)
    check_releases(backup_id, manifest.get("versions", {}), installed(), json.loads(os.environ["RESTORE_RULES"]))
    files = manifest.get("artifacts", {}).get("files", 0)
    what = f"backup {backup_id} was taken of an install whose artifacts are in {source}"

    if source == "pvc" and target != "pvc":
        refuse(
            f"{what} (the backup holds them, {files} files), and this install keeps its artifacts in {target}: "
            "a restore copies artifacts into a volume only, so every one would be missing. Nothing was changed. "
            "Restore it into an install with a volume for its artifacts: pulumi config rm pulp:storage"
        )
    if source != "pvc" and target == "pvc":
        if source.startswith("azure://"):
            account, container, _ = azure_parts(source)
            how = (
                f"container: pulumi config set --path pulp:storage.azure.accountName {account} && "
                f"pulumi config set --path pulp:storage.azure.container {container} (with the location and "
                "endpointUrl of the install it was taken of, and pulp:azureAccountKey), then pulumi up"
            )
        elif source.startswith("gs://"):
            bucket, location = gcs_parts(source)
            how = (
                f"bucket: pulumi config set --path pulp:storage.gcs.bucket {bucket}"
                + (f" && pulumi config set --path pulp:storage.gcs.location {location}" if location else "")
                + " (with pulp:gcsCredentials), then pulumi up"
            )
        else:
            how = (
                f"bucket: pulumi config set --path pulp:storage.s3.bucket {source[len('s3://') :]} (with the "
                "endpointUrl, region and accessKeyId of the install it was taken of), then pulumi up"
            )
        refuse(
            f"{what} (the backup holds none of them), and this install keeps its artifacts on a volume: "
            f"every one would be missing. Nothing was changed. Restore it into an install that reads that {how}"
        )
    if target == "pvc":
        log(f"backup {backup_id} holds its artifacts ({files} files); restore.sh copies them into the volume")
        return

    total, first, missing, extra = missing_in_store(backup_dir, target)
    if missing:
        moved = "" if source == target else f" (the backup was taken with {source})"
        refuse(
            f"{missing} of the {total} artifacts backup {backup_id} references are not in {target}{moved} "
            f"(first: {' '.join(first)}): the restored Pulp would reference objects that are gone, for good "
            "where they were uploaded. Nothing was changed. Objects deleted since the backup (orphan cleanup) "
            "come back from the bucket's own versions or backup: restore them, then pulumi up again"
            + (f"; or copy the objects over first ({copy_command(source, target)})" if source != target else "")
        )
    log(
        f"all {total} artifacts backup {backup_id} references are in {target}"
        + ("" if source == target else f" (the backup was taken with {source})")
        + (f"; {extra} objects there are not referenced by it and stay (Pulp never deletes them)" if extra else "")
    )


if __name__ == "__main__":
    main()
