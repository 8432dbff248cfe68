// Real Pulp on the real node: backups (components/backup) of an install with content in it, taken the way
// a person takes one (`npm run backup -- now`), then opened as a restore would: the dump is restored
// into a scratch PostgreSQL, and the artifacts and keys are compared with what the install holds.
// Ordered: each test builds on the one before.
import { spawnSync } from "child_process";
import { createHmac } from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import {
  dropStack,
  freshStack,
  getJson,
  items,
  kubectl,
  mustPulumi,
  setSecrets,
} from "../../../testbed/harness";
import { REPO } from "../../../testbed/local/environment";
import { distributeFile, portForward, Pulp, pulpCli, sha256 } from "../../../testbed/real/clients";
import { ensureCnpgOperator } from "../../../testbed/real/cnpg";
import { backupTool, lastJsonLine, pulpShell } from "../../../testbed/real/operate";
import { importImages, localImages, ONE_POD_EACH } from "../../../testbed/real/stack";

jest.setTimeout(20 * 60 * 1000);

const STACK = "real-backup";
const NS = "pulp-backup";
const PORT = 24881;
const ORIGIN = `http://127.0.0.1:${PORT}`;
const ADMIN_PASSWORD = "backup-admin-Vq3";
const REMOTE_PASSWORD = "remote-Secret-77x";
const DEV_STACK = path.join(REPO, "Pulumi.dev.yaml");
const pulp: Pulp = { baseUrl: ORIGIN, password: ADMIN_PASSWORD, namespace: NS };
const INSPECTOR = "backup-inspector";
const timings: Record<string, number> = {};
let forward: { stop: () => void } | undefined;
const uploaded: { name: string; sha256: string }[] = [];
const backups: { id: string; artifactFiles: number; artifactBytes: number; databaseBytes: number }[] = [];

const backupNow = () => backupTool(NS, "now");
/** The manifest's admin_password entry (backup.sh): hex HMAC-SHA256 keyed by the secret_key file. */
const hmacSha256 = (key: string | Buffer, text: string | Buffer) =>
  createHmac("sha256", key).update(text).digest("hex");

/** Runs bash in the inspector pod (the backups volume at /backups, read-only). */
function inspect(script: string): string {
  return kubectl(["exec", "-n", NS, INSPECTOR, "--", "bash", "-ec", script]).trim();
}

const inApiPod = (code: string) => pulpShell(NS, "pulp", code);

function upload(name: string, bytes: number): void {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulp-backup-")), `${name}.bin`);
  const data = Buffer.concat([Buffer.from(`${name}\n`), Buffer.alloc(bytes, name.length)]);
  fs.writeFileSync(file, data);
  distributeFile(pulp, name, file, `${name}.bin`);
  uploaded.push({ name, sha256: sha256(data) });
}

const artifactPath = (digest: string) => `artifact/${digest.slice(0, 2)}/${digest.slice(2)}`;

beforeAll(
  () => {
    freshStack(
      STACK,
      {
        namespace: NS,
        contentOrigin: ORIGIN,
        ...ONE_POD_EACH,
        backup: { enabled: true, keep: 2, volume: { size: "2Gi" } },
      },
      DEV_STACK,
    );
    setSecrets(STACK, { "pulp:adminPassword": ADMIN_PASSWORD });
    // After freshStack, which starts the cluster when it is not running.
    importImages();
    ensureCnpgOperator();
  },
  10 * 60 * 1000,
);

afterAll(() => {
  forward?.stop();
  process.stdout.write(
    `backup timings (s): ${JSON.stringify(timings)}\nbackups: ${JSON.stringify(backups)}\n`,
  );
  if (!process.env.PULP_KEEP_STACK) dropStack(STACK, NS);
});

test("an install with backups on: a suspended CronJob (on demand) and a volume of its own", async () => {
  timings.up = mustPulumi(STACK, ["up", "--yes", "--skip-preview"]).seconds;
  const cronJob = getJson(["cronjob", "pulp-backup", "-n", NS]);
  expect(cronJob.spec.suspend).toBe(true);
  expect(cronJob.spec.jobTemplate.spec.template.spec.containers[0].image).toBe(localImages().postgresql);
  expect(getJson(["pvc", "pulp-backups", "-n", NS]).status.phase).toBe("Bound");
  forward = await portForward(NS, "pulp-web", PORT, 8080);
  upload("first", 300 * 1024);
  // An encrypted field: a remote's password is stored with the db-fields key.
  pulpCli(pulp, [
    "file",
    "remote",
    "create",
    "--name",
    "private",
    "--url",
    "https://files.example.com/PULP_MANIFEST",
    "--username",
    "reader",
    "--password",
    REMOTE_PASSWORD,
  ]);
});

test("`npm run backup -- now` takes a backup and prints its id and sizes", () => {
  const run = backupNow();
  expect({ ok: run.ok, stderr: run.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  const result = lastJsonLine(run);
  expect(result.id).toMatch(/^\d{8}T\d{6}Z$/);
  expect(result.artifactFiles).toBeGreaterThanOrEqual(1);
  backups.push(result);
  timings.firstBackup = run.seconds;
});

test("the backup holds the install: manifest, checksums, keys, config and every artifact the database references", () => {
  const { id } = backups[0];
  const pvcPod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: INSPECTOR, namespace: NS },
    spec: {
      // The image's own user (postgres, uid 26) for the scratch server, in Pulp's group like the backup files.
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 26,
        runAsGroup: 700,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: "inspect",
          image: localImages().postgresql,
          command: ["sleep", "infinity"],
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: { drop: ["ALL"] },
            readOnlyRootFilesystem: true,
          },
          volumeMounts: [
            { name: "backups", mountPath: "/backups", readOnly: true },
            { name: "tmp", mountPath: "/tmp" },
            { name: "run", mountPath: "/var/run/postgresql" },
          ],
        },
      ],
      volumes: [
        { name: "backups", persistentVolumeClaim: { claimName: "pulp-backups", readOnly: true } },
        { name: "tmp", emptyDir: {} },
        { name: "run", emptyDir: {} },
      ],
      terminationGracePeriodSeconds: 1,
    },
  };
  kubectl(["apply", "-f", "-"], JSON.stringify(pvcPod));
  kubectl(["wait", "-n", NS, `pod/${INSPECTOR}`, "--for=condition=Ready", "--timeout=120s"]);

  const manifest = JSON.parse(inspect(`cat /backups/${id}/manifest.json`));
  expect(manifest.id).toBe(id);
  // The versions are the image's own: every package Pulp's status names, at the version it reports.
  expect(manifest.versions.pulpcore).toBe("3.123.1");
  const running = pulpCli(pulp, ["status"]).versions as { package: string; version: string }[];
  expect(running.length).toBeGreaterThanOrEqual(2);
  for (const { package: name, version } of running) {
    const key = name.toLowerCase().replace(/_/g, "-");
    expect({ key, version: manifest.versions[key] }).toEqual({ key, version });
  }
  expect(manifest.database.sha256).toBe(inspect(`sha256sum /backups/${id}/database.dump | cut -d' ' -f1`));
  // Every key the install needs, equal to the Secrets it runs with.
  const secret = (name: string, key: string) =>
    Buffer.from(getJson(["secret", name, "-n", NS]).data[key], "base64");
  expect(manifest.keys["database_fields.symmetric.key"]).toBe(
    sha256(secret("pulp-db-fields-encryption", "database_fields.symmetric.key")),
  );
  // The admin password, which a person chose, as an HMAC keyed by secret_key: its sha256 could be brute-forced.
  expect(manifest.keys.admin_password).toBe(
    `hmac-sha256:${hmacSha256(secret("pulp-secret-key", "secret_key"), ADMIN_PASSWORD)}`,
  );
  expect(JSON.stringify(manifest)).not.toContain(sha256(ADMIN_PASSWORD));
  expect(manifest.keys.secret_key).toBe(sha256(secret("pulp-secret-key", "secret_key")));
  expect(JSON.parse(inspect(`cat /backups/${id}/config.json`)).backup.keep).toBe(2);

  // The artifacts: as many as Pulp has, the uploaded one among them with its bytes intact.
  const artifacts = Number(
    inApiPod("from pulpcore.app.models import Artifact; print(Artifact.objects.count())"),
  );
  expect(manifest.artifacts.referenced).toBe(artifacts);
  const digest = uploaded[0].sha256;
  expect(inspect(`sha256sum /backups/${id}/media/${artifactPath(digest)} | cut -d' ' -f1`)).toBe(digest);
});

test("the dump restores into an empty PostgreSQL with every row: artifacts, content and the encrypted remote", () => {
  const { id } = backups[0];
  const counts = inspect(`
    export PGDATA=/tmp/pg PGHOST=/tmp PGUSER=postgres
    initdb --auth=trust --username=postgres >/dev/null
    pg_ctl --wait --options="-k /tmp -c listen_addresses=''" --log=/tmp/pg.log start >/dev/null
    createdb pulp
    pg_restore --dbname=pulp --no-owner --exit-on-error /backups/${id}/database.dump
    psql -XAt -d pulp -c "select (select count(*) from core_artifact) || ' ' || (select count(*) from file_filecontent) || ' ' || (select password from core_remote where name = 'private')"
    pg_ctl --wait stop >/dev/null`);
  const [artifacts, content, password] = counts.split(" ");
  expect(Number(artifacts)).toBe(
    Number(inApiPod("from pulpcore.app.models import Artifact; print(Artifact.objects.count())")),
  );
  expect(Number(content)).toBeGreaterThanOrEqual(1);
  // Stored encrypted: the dump holds ciphertext, never the password itself.
  expect(password).not.toContain(REMOTE_PASSWORD);
  expect(password.length).toBeGreaterThan(REMOTE_PASSWORD.length);
});

test("the next backup copies only new artifacts and links the rest; retention keeps the newest two", async () => {
  upload("second", 200 * 1024);
  const second = backupNow();
  expect(second.ok).toBe(true);
  backups.push(lastJsonLine(second));
  const [a, b] = backups.map((x) => x.id);
  const inode = (id: string, digest: string) =>
    inspect(`stat -c %i /backups/${id}/media/${artifactPath(digest)}`);
  // Unchanged since the first backup: the same file (a hard link), not a second copy.
  expect(inode(b, uploaded[0].sha256)).toBe(inode(a, uploaded[0].sha256));
  expect(inspect(`sha256sum /backups/${b}/media/${artifactPath(uploaded[1].sha256)} | cut -d' ' -f1`)).toBe(
    uploaded[1].sha256,
  );

  await new Promise((r) => setTimeout(r, 1100)); // ids are per second
  const third = backupNow();
  expect(third.ok).toBe(true);
  const c = lastJsonLine(third).id;
  backups.push(lastJsonLine(third));
  expect(inspect("ls /backups").split("\n")).toEqual([b, c]);
  // The first backup's files live on in the ones that share them.
  expect(inspect(`sha256sum /backups/${c}/media/${artifactPath(uploaded[0].sha256)} | cut -d' ' -f1`)).toBe(
    uploaded[0].sha256,
  );
});

test("`npm run backup -- list` shows the kept backups; `export` writes one as a tar, manifest first, that checks out", () => {
  const [, b, c] = backups.map((x) => x.id);
  const listed = backupTool(NS, "list");
  expect(listed.ok).toBe(true);
  expect(
    listed.stdout
      .split("\n")
      .slice(1, 3)
      .map((line) => line.split("\t").slice(0, 2)),
  ).toEqual([
    [b, "3.123.1"],
    [c, "3.123.1"],
  ]);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulp-export-"));
  const file = path.join(dir, "backup.tar");
  const exported = backupTool(NS, "export", c, "-o", file);
  expect({ ok: exported.ok, stderr: exported.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  const result = JSON.parse(exported.stdout.trim());
  expect([result.bytes, result.sha256]).toEqual([fs.statSync(file).size, sha256(fs.readFileSync(file))]);
  timings.exportSeconds = exported.seconds;
  timings.exportBytes = result.bytes;
  const entries = spawnSync("tar", ["-tf", file], { encoding: "utf8" }).stdout.trim().split("\n");
  expect(entries[0]).toBe(`${c}/manifest.json`);
  // The keys are not in the archive, but beside it, for the owner alone.
  expect(entries.filter((e) => e.startsWith(`${c}/keys`))).toEqual([]);
  expect(result.keys.file).toBe(path.join(dir, "backup.keys.tar"));
  expect(fs.statSync(result.keys.file).mode & 0o777).toBe(0o600);
  expect(spawnSync("tar", ["-xf", file, "-C", dir]).status).toBe(0);
  expect(spawnSync("tar", ["-xf", result.keys.file, "-C", dir]).status).toBe(0);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, c, "manifest.json"), "utf8"));
  expect(sha256(fs.readFileSync(path.join(dir, c, "database.dump")))).toBe(manifest.database.sha256);
  for (const { sha256: digest } of uploaded) {
    expect(sha256(fs.readFileSync(path.join(dir, c, "media", artifactPath(digest))))).toBe(digest);
  }
  const keyFile = (f: string) => fs.readFileSync(path.join(dir, c, "keys", f));
  expect(`hmac-sha256:${hmacSha256(keyFile("secret_key"), keyFile("admin_password"))}`).toBe(
    manifest.keys.admin_password,
  );
  // A backup that is not there: the command says which ones are.
  const missing = backupTool(NS, "export", "20000101T000000Z", "-o", path.join(dir, "none.tar"));
  expect(missing.ok).toBe(false);
  expect(missing.stderr).toContain(`no backup 20000101T000000Z in pulp-backups; there are: ${b} ${c}`);
  expect(fs.existsSync(path.join(dir, "none.tar"))).toBe(false);
  fs.rmSync(dir, { recursive: true, force: true });
});

test("an artifact the database references but the volume lacks fails the backup, saying what to do", () => {
  const lost = artifactPath(uploaded[1].sha256);
  const worker = items("pods", NS).find(
    (p) => p.metadata.name.startsWith("pulp-worker-") && p.status.phase === "Running",
  );
  kubectl([
    "exec",
    "-n",
    NS,
    worker.metadata.name,
    "-c",
    "worker",
    "--",
    "mv",
    `/var/lib/pulp/media/${lost}`,
    "/var/lib/pulp/tmp/lost",
  ]);
  try {
    const run = backupNow();
    expect(run.ok).toBe(false);
    expect(run.stderr).toMatch(
      /1 artifact file\(s\) the database references are not in \/var\/lib\/pulp\/media/,
    );
    expect(run.stderr).toContain(lost);
    expect(run.stderr).toMatch(/run the backup again/);
    // The failed run left no backup behind (and no half-written one once the next succeeds).
    expect(inspect("ls /backups").split("\n")).toEqual(backups.slice(1).map((x) => x.id));
  } finally {
    kubectl([
      "exec",
      "-n",
      NS,
      worker.metadata.name,
      "-c",
      "worker",
      "--",
      "mv",
      "/var/lib/pulp/tmp/lost",
      `/var/lib/pulp/media/${lost}`,
    ]);
  }
  const again = backupNow();
  expect(again.ok).toBe(true);
  expect(inspect("ls -A /backups | grep -c partial || true")).toBe("0");
});
