// npm run bench:backup — what backups and restores of a known data set cost on the real node, one figure
// a line. The data set: BENCH_FILES files of BENCH_FILE_KIB KiB each (defaults 20 and 2048: 40 MiB of
// random bytes), uploaded through pulp-cli into a fresh install of the dev stack (CloudNativePG, pulp-web,
// one pod each), whose backups also go to object storage (moto's S3 server on the host, testbed/s3).
// Then, each as a person runs it:
//   - a first backup (every artifact copied), as backup.sh measures it in its pod and as the caller waits,
//     with the archive's upload to the bucket as upload.py measures it;
//   - a second with nothing changed (the dump, and hard links for every artifact);
//   - a third after 5 more files (only those copied);
//   - the export of the last one as a tar through `kubectl exec`;
//   - a restore of it into a new stack from the backups volume: its first `pulumi up` (restore Job,
//     migration, pods ready) and the Job's own time;
//   - a restore of it into a new stack in a new namespace from the bucket (a presigned URL, the real
//     CDI): the first `up`, the DataVolume's import and the restore Job.
// Each restored install's artifacts are read back and hashed in its api pod; the bench fails unless they
// are the source's, each with its sha256.
import * as crypto from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { dropStack, freshStack, getJson, mustPulumi, pulumi } from "../harness";
import { REPO, runMain } from "../local/environment";
import { ensureCdi } from "../real/cdi";
import { portForward, Pulp, pulpCli } from "../real/clients";
import { ensureCnpgOperator } from "../real/cnpg";
import { ArtifactCheck, backupTool as runBackupTool, checkArtifacts, lastJsonLine } from "../real/operate";
import { ObjectStorage, startObjectStorage } from "../real/s3";
import { importImages, ONE_POD_EACH } from "../real/stack";

const SOURCE = "bench-backup";
const NS = "pulp-bench-backup";
const FROM_VOLUME = "bench-backup-restored";
const FROM_BUCKET = "bench-backup-from-bucket";
const BUCKET_NS = "pulp-bench-backup-bucket";
const BUCKET = "bench-backups";
const PORT = 24882;
const FILES = Number(process.env.BENCH_FILES ?? 20);
const FILE_KIB = Number(process.env.BENCH_FILE_KIB ?? 2048);
const DEV_STACK = path.join(REPO, "Pulumi.dev.yaml");

interface BackupResult {
  id: string;
  seconds: number;
  databaseBytes: number;
  artifactFiles: number;
  artifactBytes: number;
  s3: { bytes: number; seconds: number };
}

/** `npm run backup -- <command>` as a person runs it (real/operate.ts); fails the bench if it fails. */
function backupTool(namespace: string, ...command: string[]) {
  const run = runBackupTool(namespace, ...command);
  if (!run.ok) throw new Error(`npm run backup -- ${command.join(" ")} failed: ${run.stderr}`);
  return run;
}

function backupNow(): { result: BackupResult; seconds: number } {
  const run = backupTool(NS, "now");
  return { result: lastJsonLine(run), seconds: run.seconds };
}

function uploadFiles(pulp: Pulp, dir: string, first: number, count: number): void {
  for (let i = first; i < first + count; i++) {
    const file = path.join(dir, `file-${i}.bin`);
    fs.writeFileSync(file, crypto.randomBytes(FILE_KIB * 1024));
    pulpCli(pulp, [
      "file",
      "content",
      "upload",
      "--file",
      file,
      "--relative-path",
      `file-${i}.bin`,
      "--repository",
      "bench",
    ]);
    fs.rmSync(file);
  }
}

/** The restore Job's own time, as restore.sh wrote it into its termination message. */
function restoreJobSeconds(namespace: string, job: string): number {
  const pods = getJson(["pods", "-n", namespace, "-l", `job-name=${job}`]).items;
  const message = pods[0]?.status?.containerStatuses?.[0]?.state?.terminated?.message;
  if (!message) throw new Error(`restore Job ${job}: no termination message on its pod`);
  return JSON.parse(message).seconds;
}

/**
 * From the DataVolume's creation until CDI called it Ready (the archive imported and unpacked), in the API
 * server's whole seconds.
 */
function importSeconds(namespace: string, dataVolume: string): number {
  const dv = getJson(["datavolume", "-n", namespace, dataVolume]);
  const ready = dv.status?.conditions?.find((c: { type: string }) => c.type === "Ready");
  if (dv.status?.phase !== "Succeeded" || ready?.status !== "True")
    throw new Error(`DataVolume ${dataVolume} is ${dv.status?.phase}, not Succeeded`);
  return (Date.parse(ready.lastTransitionTime) - Date.parse(dv.metadata.creationTimestamp)) / 1000;
}

function sameArtifacts(what: string, restored: ArtifactCheck, source: ArtifactCheck): void {
  if (restored.bad !== 0 || restored.artifacts !== source.artifacts || restored.bytes !== source.bytes) {
    throw new Error(`${what}: artifacts ${JSON.stringify(restored)}, the source's ${JSON.stringify(source)}`);
  }
}

async function bench(): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-backup-"));
  freshStack(
    SOURCE,
    {
      namespace: NS,
      contentOrigin: `http://127.0.0.1:${PORT}`,
      ...ONE_POD_EACH,
      backup: { enabled: true, keep: 3 },
    },
    DEV_STACK,
  );
  importImages();
  ensureCnpgOperator();
  ensureCdi();
  let storage: ObjectStorage | undefined;
  let forward: { stop: () => void } | undefined;
  try {
    storage = await startObjectStorage();
    storage.createBucket(BUCKET);
    const s3 = { bucket: BUCKET, endpointUrl: storage.endpointUrl, accessKeyId: storage.accessKeyId };
    for (const [key, value] of Object.entries(s3))
      mustPulumi(SOURCE, ["config", "set", "--path", `pulp:backup.s3.${key}`, value]);
    mustPulumi(SOURCE, [
      "config",
      "set",
      "--secret",
      "pulp:backupS3SecretAccessKey",
      storage.secretAccessKey,
    ]);
    mustPulumi(SOURCE, ["up", "--yes", "--skip-preview"]);
    forward = await portForward(NS, "pulp-web", PORT, 8080);
    const secret = getJson(["secret", "pulp-admin-password", "-n", NS]);
    const pulp = {
      baseUrl: `http://127.0.0.1:${PORT}`,
      password: Buffer.from(secret.data.password, "base64").toString(),
    };
    pulpCli(pulp, ["file", "repository", "create", "--name", "bench"]);
    const started = Date.now();
    uploadFiles(pulp, dir, 0, FILES);
    const uploadSeconds = (Date.now() - started) / 1000;

    const full = backupNow();
    const unchanged = backupNow();
    uploadFiles(pulp, dir, FILES, 5);
    const incremental = backupNow();
    const id = incremental.result.id;
    const archive = path.join(dir, "export.tar");
    const exported = backupTool(NS, "export", id, "-o", archive);
    const source = checkArtifacts(NS, "pulp");

    // Into a new stack beside the source, from its backups volume.
    freshStack(
      FROM_VOLUME,
      {
        namespace: NS,
        createNamespace: false,
        instanceName: "restored",
        contentOrigin: "http://127.0.0.1:8080",
        ...ONE_POD_EACH,
        backup: { enabled: false },
        restore: { backup: id, claim: "pulp-backups" },
      },
      DEV_STACK,
    );
    backupTool(NS, "keys", id, "--stack", FROM_VOLUME);
    const fromVolume = mustPulumi(FROM_VOLUME, ["up", "--yes", "--skip-preview"]);
    const fromVolumeJob = restoreJobSeconds(NS, `restored-restore-${id.toLowerCase()}`);
    sameArtifacts("restored from the volume", checkArtifacts(NS, "restored"), source);

    // Into a new namespace from the bucket, through the real CDI; the keys from the exported archive.
    freshStack(
      FROM_BUCKET,
      {
        namespace: BUCKET_NS,
        contentOrigin: "http://127.0.0.1:8080",
        ...ONE_POD_EACH,
        backup: { enabled: false },
        restore: { backup: id, http: { size: "1Gi" } },
      },
      DEV_STACK,
    );
    // A presigned URL is a credential: secret config (plain, it is refused).
    const url = storage.presign(BUCKET, `${NS}/pulp/${id}.tar`, 3600);
    mustPulumi(FROM_BUCKET, ["config", "set", "--secret", "--path", "pulp:restore.http.url", url]);
    // The keys are apart from the archive: export writes them beside it.
    backupTool(BUCKET_NS, "keys", id, "--archive", path.join(dir, "export.keys.tar"), "--stack", FROM_BUCKET);
    const fromBucket = mustPulumi(FROM_BUCKET, ["up", "--yes", "--skip-preview"]);
    const job = `pulp-restore-${id.toLowerCase()}`;
    const fromBucketImport = importSeconds(BUCKET_NS, job);
    const fromBucketJob = restoreJobSeconds(BUCKET_NS, job);
    sameArtifacts("restored from the bucket", checkArtifacts(BUCKET_NS, "pulp"), source);

    const backupLines = (name: string, b: { result: BackupResult; seconds: number }) => [
      `backup_${name}_in_pod_seconds ${b.result.seconds}`,
      `backup_${name}_wall_seconds ${b.seconds.toFixed(1)}`,
      `backup_${name}_s3_upload_seconds ${b.result.s3.seconds}`,
      `backup_${name}_s3_bytes ${b.result.s3.bytes}`,
    ];
    const lines = [
      `dataset_files ${FILES}`,
      `dataset_file_kib ${FILE_KIB}`,
      `dataset_upload_seconds ${uploadSeconds.toFixed(1)}`,
      `backup_full_database_bytes ${full.result.databaseBytes}`,
      `backup_full_artifact_files ${full.result.artifactFiles}`,
      `backup_full_artifact_bytes ${full.result.artifactBytes}`,
      ...backupLines("full", full),
      ...backupLines("unchanged", unchanged),
      ...backupLines("5_new_files", incremental),
      `export_seconds ${exported.seconds.toFixed(1)}`,
      `export_bytes ${lastJsonLine(exported).bytes}`,
      `restored_artifacts ${source.artifacts}`,
      `restored_artifact_bytes ${source.bytes}`,
      `restore_from_volume_up_seconds ${fromVolume.seconds.toFixed(1)}`,
      `restore_from_volume_job_seconds ${fromVolumeJob}`,
      `restore_from_bucket_up_seconds ${fromBucket.seconds.toFixed(1)}`,
      `restore_from_bucket_import_seconds ${fromBucketImport}`,
      `restore_from_bucket_job_seconds ${fromBucketJob}`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  } finally {
    forward?.stop();
    storage?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    dropStack(FROM_VOLUME);
    dropStack(FROM_BUCKET, BUCKET_NS);
    pulumi(SOURCE, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
    dropStack(SOURCE, NS);
  }
}

runMain(bench);
