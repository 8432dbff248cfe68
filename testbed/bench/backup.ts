// npm run bench:backup — what backups of a known data set cost on the real node, one figure a line: a
// fresh install of the dev stack (CloudNativePG, pulp-web), BENCH_FILES files of BENCH_FILE_KIB KiB each
// (defaults 20 and 2048: 40 MiB) uploaded through pulp-cli, then, each with `npm run backup`:
//   - the first backup (every artifact copied), as backup.sh measures it in its pod and as the caller waits;
//   - a second with nothing changed (the dump, and hard links for every artifact);
//   - a third after 5 more files (only those copied);
//   - the export of the last one as a tar through `kubectl exec`.
import * as crypto from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { dropStack, freshStack, getJson, mustPulumi, pulumi } from "../harness";
import { REPO, runMain } from "../local/environment";
import { portForward, Pulp, pulpCli } from "../real/clients";
import { ensureCnpgOperator } from "../real/cnpg";
import { backupTool as runBackupTool, lastJsonLine } from "../real/operate";
import { importImages } from "../real/stack";

const STACK = "bench-backup";
const NS = "pulp-bench-backup";
const PORT = 24882;
const FILES = Number(process.env.BENCH_FILES ?? 20);
const FILE_KIB = Number(process.env.BENCH_FILE_KIB ?? 2048);

/** `npm run backup -- <command>` as a person runs it (real/operate.ts); its result line and time. */
function backupTool(...command: string[]): { result: Record<string, number | string>; seconds: number } {
  const run = runBackupTool(NS, ...command);
  if (!run.ok) throw new Error(`npm run backup -- ${command.join(" ")} failed: ${run.stderr}`);
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

async function bench(): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-backup-"));
  freshStack(
    STACK,
    { namespace: NS, contentOrigin: `http://127.0.0.1:${PORT}` },
    path.join(REPO, "Pulumi.dev.yaml"),
  );
  importImages();
  ensureCnpgOperator();
  let forward: { stop: () => void } | undefined;
  try {
    mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
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

    const full = backupTool("now");
    const unchanged = backupTool("now");
    uploadFiles(pulp, dir, FILES, 5);
    const incremental = backupTool("now");
    const exported = backupTool("export", String(incremental.result.id), "-o", path.join(dir, "export.tar"));
    const lines = [
      `dataset_files ${FILES}`,
      `dataset_file_kib ${FILE_KIB}`,
      `dataset_upload_seconds ${uploadSeconds.toFixed(1)}`,
      `backup_full_in_pod_seconds ${full.result.seconds}`,
      `backup_full_wall_seconds ${full.seconds.toFixed(1)}`,
      `backup_full_database_bytes ${full.result.databaseBytes}`,
      `backup_full_artifact_files ${full.result.artifactFiles}`,
      `backup_full_artifact_bytes ${full.result.artifactBytes}`,
      `backup_unchanged_in_pod_seconds ${unchanged.result.seconds}`,
      `backup_unchanged_wall_seconds ${unchanged.seconds.toFixed(1)}`,
      `backup_5_new_files_in_pod_seconds ${incremental.result.seconds}`,
      `backup_5_new_files_wall_seconds ${incremental.seconds.toFixed(1)}`,
      `export_seconds ${exported.seconds.toFixed(1)}`,
      `export_bytes ${exported.result.bytes}`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  } finally {
    forward?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    pulumi(STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
    dropStack(STACK, NS);
  }
}

runMain(bench);
