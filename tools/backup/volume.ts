// Reading the backups volume from outside the cluster: a short-lived pod made like the backup Job's (same
// image, user and scheduling, so it passes the namespace's Pod Security and lands where the volume can
// attach) that mounts the volume read-only; list and export run in it.
import { spawn, spawnSync } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { KEY_FILES } from "../../components/backup/backup";
import { PULP_PYTHON } from "../../components/workload/pulpProcess";
import { RESTORE_KEYS } from "../../components/config/rules";
import { Kube, run } from "../kube";
import { BackupArgs } from "./args";
import { readBackupCronJob } from "./cronJob";
import { isOperatorBackup } from "../../components/backup/backupIds";
import { PULP_BACKUP_KEYS } from "../../components/backup/backupIds";
import { operatorKeys } from "./operatorKeys";

export interface ExportResult {
  id: string;
  file: string;
  bytes: number;
  sha256: string;
  /** The backup's keys/, apart from the archive (mode 0600): what `keys --archive` reads. */
  keys: { file: string; bytes: number; sha256: string };
}

/** Where export puts the keys of the archive `file`, and where the bucket has them: `X.tar` → `X.keys.tar`. */
export function keysFileOf(file: string): string {
  return `${file.replace(/\.tar$/, "")}.keys.tar`;
}

/** What a reader pod reads: another volume than the CronJob's, and the bucket too (list). */
export interface ReaderOptions {
  claim?: string;
  bucket?: boolean;
}

/**
 * The reader pod's manifest, from the CronJob's pod template. With `bucket` and backups in object
 * storage, a second container made like the upload one (the Pulp image, its S3 settings and credentials)
 * reads the bucket with upload.py.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function readerPod(cronJob: any, name: string, options: ReaderOptions = {}): Record<string, unknown> {
  const template = cronJob.spec.jobTemplate.spec.template.spec;
  // With object storage the backup container is an init container (the upload runs after it).
  const backup = [...(template.initContainers ?? []), ...template.containers].find(
    (c: { name: string }) => c.name === "backup",
  );
  const upload = options.bucket && template.containers.find((c: { name: string }) => c.name === "upload");
  const volume = template.volumes.find((v: { name: string }) => v.name === "backups");
  const script = template.volumes.find((v: { name: string }) => v.name === "script");
  const resources = { requests: { cpu: "10m", memory: "32Mi" }, limits: { memory: "256Mi" } };
  // The projected token of the pods' identity (pulp:serviceAccount), when the upload has one.
  const identity = upload
    ? template.volumes.filter((v: { projected?: { sources?: { serviceAccountToken?: unknown }[] } }) =>
        v.projected?.sources?.some((s) => s.serviceAccountToken),
      )
    : [];
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: cronJob.metadata.namespace, labels: cronJob.metadata.labels },
    spec: {
      securityContext: template.securityContext,
      nodeSelector: template.nodeSelector,
      tolerations: template.tolerations,
      affinity: template.affinity,
      imagePullSecrets: template.imagePullSecrets,
      automountServiceAccountToken: false,
      ...(upload && template.serviceAccountName ? { serviceAccountName: template.serviceAccountName } : {}),
      enableServiceLinks: false,
      restartPolicy: "Never",
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: "reader",
          image: backup.image,
          command: ["sleep", "3600"],
          securityContext: backup.securityContext,
          resources,
          volumeMounts: [{ name: "backups", mountPath: "/backups", readOnly: true }],
        },
        ...(upload
          ? [
              {
                name: "bucket",
                image: upload.image,
                command: ["sleep", "3600"],
                env: upload.env,
                securityContext: upload.securityContext,
                resources: { ...resources, limits: { memory: "512Mi" } },
                // The upload's, the identity's token included when the bucket is reached without a key.
                volumeMounts: (upload.volumeMounts as { name: string }[]).filter((m) =>
                  ["script", "tmp", ...identity.map((v: { name: string }) => v.name)].includes(m.name),
                ),
              },
            ]
          : []),
      ],
      volumes: [
        {
          name: "backups",
          persistentVolumeClaim: {
            claimName: options.claim ?? volume.persistentVolumeClaim.claimName,
            readOnly: true,
          },
        },
        ...(upload ? [script, { name: "tmp", emptyDir: {} }, ...identity] : []),
      ],
    },
  };
}

/** A command line that runs `script` in the reader pod's `reader` container, or its `bucket` one. */
type Exec = (script: string, container?: "reader" | "bucket") => string[];

/** Runs `use` with a reader pod of the backups volume, and deletes the pod after, whatever happens. */
async function withReader<T>(
  kube: Kube,
  args: BackupArgs,
  use: (exec: Exec, bucket: boolean) => Promise<T>,
  options: { bucket?: boolean } = {},
): Promise<T> {
  const cronJob = readBackupCronJob(kube, args);
  const name = `${args.instance}-backup-reader-${process.pid}`;
  const pod = readerPod(cronJob, name, { claim: args.claim, bucket: options.bucket });
  const applied = run(kube, ["apply", "-f", "-"], JSON.stringify(pod));
  if (!applied.ok) throw new Error(`cannot create the reader pod ${name}: ${applied.stderr.trim()}`);
  try {
    const ready = run(kube, [
      "wait",
      "-n",
      args.namespace,
      `pod/${name}`,
      "--for=condition=Ready",
      "--timeout=25s",
    ]);
    if (!ready.ok) {
      const events = run(kube, [
        "get",
        "events",
        "-n",
        args.namespace,
        "--field-selector",
        `involvedObject.name=${name}`,
      ]);
      throw new Error(
        `the reader pod ${name} did not start within 25 s: ${events.stdout.trim() || ready.stderr.trim()}`,
      );
    }
    const exec: Exec = (script, container = "reader") => [
      "exec",
      "-n",
      args.namespace,
      name,
      "-c",
      container,
      "--",
      "sh",
      "-ec",
      script,
    ];
    const containers = (pod.spec as { containers: unknown[] }).containers;
    return await use(exec, containers.length > 1);
  } finally {
    run(kube, ["delete", "pod", "-n", args.namespace, name, "--wait=false"]);
  }
}

/** What `list` shows of one backup's manifest (manifest.json in the volume, <id>.json in the bucket). */
export interface ListedManifest {
  id: string;
  versions?: { pulpcore?: string };
  database: { bytes: number };
  artifacts: { files: number; bytes: number };
  archive?: { key: string; bytes: number };
}

/** Manifests printed one after another, each a JSON object starting on a line of its own. */
function parseManifests(text: string): ListedManifest[] {
  return text
    .split(/\n(?=\{)/)
    .filter((part) => part.trim())
    .map((part) => JSON.parse(part));
}

/**
 * One line per backup, oldest first: id, pulpcore, database and artifact sizes, and where it is (the
 * volume, the bucket or both). Backups only the bucket still holds (the volume's `keep` is per place)
 * are listed too.
 */
export function backupTable(volume: ListedManifest[], bucket?: ListedManifest[]): string {
  const byId = new Map<string, { manifest: ListedManifest; where: string[] }>();
  for (const [place, manifests] of [
    ["volume", volume],
    ["s3", bucket ?? []],
  ] as const) {
    for (const m of manifests) {
      const row = byId.get(m.id) ?? { manifest: m, where: [] };
      row.where.push(place);
      byId.set(m.id, row);
    }
  }
  const rows = [...byId.keys()].sort().map((id) => {
    const { manifest: m, where } = byId.get(id)!;
    return [
      m.id,
      m.versions?.pulpcore ?? "?",
      `${m.database.bytes} B`,
      `${m.artifacts.files} files`,
      `${m.artifacts.bytes} B`,
      ...(bucket ? [where.join(", ")] : []),
    ].join("\t");
  });
  const header = ["id", "pulpcore", "database", "artifacts", "artifact bytes", ...(bucket ? ["where"] : [])];
  return `${header.join("\t")}\n${rows.join("\n")}\n`;
}

/**
 * The kept backups in the volume and, with backup.s3, in the bucket (read by upload.py in the reader
 * pod, with the CronJob's credentials).
 */
export async function listBackups(kube: Kube, args: BackupArgs): Promise<string> {
  return withReader(
    kube,
    args,
    async (exec, hasBucket) => {
      const r = run(
        kube,
        exec('for m in /backups/*/manifest.json; do [ -f "$m" ] && cat "$m" && echo; done; true'),
      );
      if (!r.ok) throw new Error(`cannot read the backups volume: ${r.stderr.trim()}`);
      const volume = parseManifests(r.stdout);
      let bucket: ListedManifest[] | undefined;
      if (hasBucket) {
        const b = run(kube, exec(`${PULP_PYTHON}\nexec $py /opt/backup/upload.py list`, "bucket"));
        if (!b.ok) throw new Error(`cannot read the backups bucket: ${b.stderr.trim()}`);
        bucket = parseManifests(b.stdout);
      }
      if (volume.length + (bucket?.length ?? 0) === 0)
        return `no backups yet in ${args.instance}-backups (npm run backup -- now takes one)\n`;
      return backupTable(volume, bucket);
    },
    { bucket: true },
  );
}

/** Runs `argv` (kubectl) and streams its stdout into `file`, created with `mode`; its size and sha256. */
function streamTo(
  kube: Kube,
  argv: string[],
  file: string,
  mode: number,
  what: string,
): Promise<{ bytes: number; sha256: string }> {
  const hash = crypto.createHash("sha256");
  let bytes = 0;
  const stderr: Buffer[] = [];
  fs.rmSync(file, { force: true }); // created anew, so `mode` holds
  return new Promise((resolve, reject) => {
    const child = spawn(
      kube.kubectl,
      [...(kube.kubeconfig ? ["--kubeconfig", kube.kubeconfig] : []), ...argv],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const out = fs.createWriteStream(file, { mode });
    child.stdout.on("data", (chunk: Buffer) => {
      hash.update(chunk);
      bytes += chunk.length;
    });
    child.stdout.pipe(out);
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", reject);
    child.on("close", (code) =>
      out.close(() =>
        code === 0
          ? resolve({ bytes, sha256: hash.digest("hex") })
          : reject(
              new Error(
                `exporting ${what} failed (kubectl exit ${code}): ${Buffer.concat(stderr).toString().trim()}`,
              ),
            ),
      ),
    );
  });
}

/**
 * One backup as two tars. The archive, in the order a restore reads it: manifest.json first, then the
 * config, the dump and the artifacts, without the keys. Its members are readable by all (a+rX): CDI's
 * importer unpacks an archive as its own uid keeping the modes (tar --preserve-permissions, CDI
 * pkg/util/util.go), and on ReadWriteMany storage, where Kubernetes applies no fsGroup by default, the
 * restore Job's uid could read nothing else. The keys go into their own tar beside it (keysFileOf; file
 * and members 0600), so that the archive, which a restore serves over http, carries none. The pod writes
 * both to kubectl's stdout; nothing is staged in the cluster.
 */
export async function exportBackup(kube: Kube, args: BackupArgs): Promise<ExportResult> {
  const id = args.id!;
  const file = args.output!;
  const keysFile = keysFileOf(file);
  return withReader(kube, args, async (exec) => {
    const found = run(kube, exec(`test -f /backups/${id}/manifest.json || { ls /backups; exit 3; }`));
    if (!found.ok) {
      throw new Error(
        `no backup ${id} in ${args.instance}-backups; there are: ${found.stdout.trim().split("\n").join(" ") || "none"}`,
      );
    }
    const tar =
      `cd /backups && set -- ${id}/manifest.json ${id}/config.json ${id}/database.dump ${id}/artifacts.list; ` +
      `[ -d ${id}/media ] && set -- "$@" ${id}/media.list ${id}/media; exec tar --mode=a+rX -cf - "$@"`;
    try {
      const keys = await streamTo(
        kube,
        exec(`cd /backups && exec tar --mode=u+rw,go-rwx -cf - ${id}/keys`),
        keysFile,
        0o600,
        `the keys of ${id}`,
      );
      const archive = await streamTo(kube, exec(tar), file, 0o666, id); // less the umask, as before
      return { id, file, ...archive, keys: { file: keysFile, ...keys } };
    } catch (e) {
      // A partial archive must not pass for a backup.
      fs.rmSync(file, { force: true });
      fs.rmSync(keysFile, { force: true });
      throw e;
    }
  });
}

/** The stack config keys a restore needs, by the file that holds each in a backup's keys/. */
export const RESTORE_KEY_FILES: Record<(typeof RESTORE_KEYS)[number], string> = {
  secretKey: KEY_FILES.secretKey,
  dbFieldsEncryptionKey: KEY_FILES.dbFieldsKey,
  adminPassword: KEY_FILES.adminPassword,
};

/** A PulpBackup's keys as a backup's key files: base64 by file name (RESTORE_KEY_FILES). */
function asKeyFiles(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(RESTORE_KEY_FILES).map(([key, file]) => [
      file,
      Buffer.from(values[key]).toString("base64"),
    ]),
  );
}

/** The key files of a backup in its volume, base64 by file name. */
export async function keysFromVolume(kube: Kube, args: BackupArgs): Promise<Record<string, string>> {
  const id = args.id!;
  if (isOperatorBackup(id)) {
    return withReader(kube, args, async (exec) => {
      const texts: Record<string, string> = {};
      for (const { file } of Object.values(PULP_BACKUP_KEYS)) {
        const r = run(kube, exec(`cat /backups/${id}/${file}`));
        if (r.ok) texts[file] = r.stdout;
      }
      return asKeyFiles(operatorKeys(id, (file) => texts[file]));
    });
  }
  return withReader(kube, args, async (exec) => {
    const files = Object.values(RESTORE_KEY_FILES).join(" ");
    const r = run(
      kube,
      exec(`cd /backups/${id}/keys && for f in ${files}; do printf '%s ' "$f"; base64 -w0 "$f"; echo; done`),
    );
    if (!r.ok) throw new Error(`cannot read the keys of backup ${id}: ${r.stderr.trim()}`);
    return Object.fromEntries(
      r.stdout
        .trim()
        .split("\n")
        .map((line) => line.split(" ")),
    );
  });
}

/**
 * The key files of a backup, base64 by file name, from its keys archive (`<id>.keys.tar` in the bucket,
 * or what `npm run backup -- export` wrote beside the archive), or from an archive of before they went
 * apart, which holds <id>/keys/ too. Read with tar, so no cluster is needed before the first `up`.
 */
export function keysFromArchive(archive: string, id: string): Record<string, string> {
  if (!fs.existsSync(archive)) throw new Error(`no archive at ${archive}`);
  if (isOperatorBackup(id)) {
    // A tar of the PulpBackup's directory (docs/migrate-from-pulp-operator.md): <id>/<file>.
    return asKeyFiles(
      operatorKeys(id, (file) => {
        const r = spawnSync("tar", ["-xOf", archive, `${id}/${file}`]);
        if (r.error) throw new Error(`cannot run tar: ${r.error.message}`);
        return r.status === 0 ? r.stdout.toString("utf8") : undefined;
      }),
    );
  }
  const values: Record<string, string> = {};
  for (const file of Object.values(RESTORE_KEY_FILES)) {
    const r = spawnSync("tar", ["-xOf", archive, `${id}/keys/${file}`]);
    if (r.error) throw new Error(`cannot run tar: ${r.error.message}`);
    if (r.status !== 0) {
      const keysFile = keysFileOf(archive);
      if (spawnSync("tar", ["-tf", archive, `${id}/manifest.json`]).status === 0) {
        throw new Error(
          `${archive} is backup ${id}'s archive, which holds no keys: they are in its keys archive ` +
            `(<id>.keys.tar in the bucket, ${path.basename(keysFile)} from export): ` +
            `npm run backup -- keys ${id} --archive ${keysFile}`,
        );
      }
      throw new Error(
        `${archive} has no ${id}/keys/${file}: is it backup ${id}'s keys archive? (${r.stderr.toString().trim()})`,
      );
    }
    values[file] = r.stdout.toString("base64");
  }
  return values;
}

/**
 * Sets a restore's keys in the stack config from a backup's key files: `pulumi config set --secret` with
 * each value on standard input, never on a command line or the screen. Returns the keys it set.
 */
export function setRestoreKeys(values: Record<string, string>, args: BackupArgs): string[] {
  const id = args.id!;
  const pulumiCli = process.env.PULP_PULUMI ?? "pulumi";
  const set: string[] = [];
  for (const [key, file] of Object.entries(RESTORE_KEY_FILES)) {
    const value = Buffer.from(values[file] ?? "", "base64").toString("utf8");
    if (!value) throw new Error(`backup ${id} has no keys/${file}`);
    const r = spawnSync(
      pulumiCli,
      ["config", "set", "--secret", ...(args.stack ? ["--stack", args.stack] : []), `pulp:${key}`],
      {
        input: value,
        encoding: "utf8",
      },
    );
    if (r.error)
      throw new Error(`cannot run ${pulumiCli}: ${r.error.message}; put pulumi on PATH or set PULP_PULUMI`);
    if (r.status !== 0) throw new Error(`pulumi config set pulp:${key} failed: ${r.stderr.trim()}`);
    set.push(`pulp:${key}`);
  }
  return set;
}
