// Real Pulp on the real node: a backup restored into a new install. The source install (stack A) gets a
// file and a remote with a password, and is backed up with `npm run backup -- now`.
// A new stack (B, instance "restored", in the same namespace so it can mount A's backups volume) takes
// the backup's keys with `npm run backup -- keys` and `pulp:restore`; its first `up` restores, migrates
// and starts. Real clients then read everything back through B. Then a second backup of A, exported and
// served over http, comes in through the real CDI and replaces B's live data with pulp:restore.overwrite.
// Ordered: each test builds on the last.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import {
  dropStack,
  freshStack,
  items,
  kubectl,
  mustPulumi,
  pulumi,
  writeStackConfig,
} from "../../../testbed/harness";
import { KUBECONFIG, pulumiEnv, REPO, toolchainBin } from "../../../testbed/local/environment";
import { distributeFile, get, portForward, Pulp, pulpCli, sha256 } from "../../../testbed/real/clients";
import { ensureCdi, serveFile } from "../../../testbed/real/cdi";
import { ensureCnpgOperator } from "../../../testbed/real/cnpg";
import { importImages } from "../../../testbed/real/stack";

jest.setTimeout(20 * 60 * 1000);

const SOURCE = "real-restore-source";
const TARGET = "real-restore-target";
const NS = "pulp-restore";
const SOURCE_PORT = 24883;
const TARGET_PORT = 24884;
const TARGET_PORT_AFTER = 24885;
const ADMIN_PASSWORD = "restore-admin-Kx7";
const REMOTE_PASSWORD = "remote-Secret-91q";
const DEV_STACK = path.join(REPO, "Pulumi.dev.yaml");
const small = { requests: { cpu: "50m", memory: "256Mi" }, limits: { memory: "1Gi" } };
const ONE_EACH = {
  api: { replicas: 1, resources: small },
  content: { replicas: 1, resources: small },
  worker: { replicas: 1, terminationGracePeriodSeconds: 60, resources: small },
};
const source: Pulp = { baseUrl: `http://127.0.0.1:${SOURCE_PORT}`, password: ADMIN_PASSWORD };
const target: Pulp = { baseUrl: `http://127.0.0.1:${TARGET_PORT}`, password: ADMIN_PASSWORD };
const forwards: { stop: () => void }[] = [];
const timings: Record<string, number> = {};
const data = Buffer.concat([Buffer.from("restored pulp\n"), Buffer.alloc(200 * 1024, 3)]);
let contentPath = "";
let backupId = "";
/** The second backup (of the source with one more file), and what it and the target alone hold. */
let otherId = "";
const later = { data: Buffer.from("in the second backup only\n"), contentPath: "" };
const extra = { data: Buffer.from("uploaded to the restored install only\n"), contentPath: "" };

function distribute(pulp: Pulp, name: string, data: Buffer): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulp-restore-")), `${name}.bin`);
  fs.writeFileSync(file, data);
  return distributeFile(pulp, name, file, `${name}.bin`).contentPath;
}

/** `npm run backup -- <command>` as a person runs it, with the bed's kubectl and pulumi. */
function backupTool(...command: string[]): { ok: boolean; stdout: string; stderr: string } {
  const bin = toolchainBin();
  const r = spawnSync(
    "npx",
    ["--no-install", "ts-node", "-T", "tools/backup/main.ts", ...command, "-n", NS],
    {
      cwd: REPO,
      encoding: "utf8",
      env: {
        ...pulumiEnv(),
        KUBECONFIG,
        PULP_KUBECTL: path.join(bin, "kubectl"),
        PULP_PULUMI: path.join(bin, "pulumi"),
      },
      timeout: 10 * 60 * 1000,
    },
  );
  return { ok: r.status === 0, stdout: r.stdout, stderr: r.stderr };
}

/** Python in the restored install's api pod. */
function inTargetApi(code: string): string {
  const pod = items("pods", NS).find(
    (p) => p.metadata.name.startsWith("restored-api-") && p.status.phase === "Running",
  );
  return kubectl([
    "exec",
    "-n",
    NS,
    pod.metadata.name,
    "-c",
    "api",
    "--",
    "pulpcore-manager",
    "shell",
    "-c",
    code,
  ]).trim();
}

beforeAll(
  () => {
    freshStack(
      SOURCE,
      { namespace: NS, contentOrigin: source.baseUrl, ...ONE_EACH, backup: { enabled: true, keep: 2 } },
      DEV_STACK,
    );
    mustPulumi(SOURCE, ["config", "set-all", "--secret", `pulp:adminPassword=${ADMIN_PASSWORD}`]);
    // The target shares the namespace (made by the source) and reads the source's backups volume.
    writeStackConfig(TARGET, {}, DEV_STACK);
    pulumi(TARGET, ["stack", "rm", "--force", "--yes"]);
    importImages();
    ensureCnpgOperator();
    ensureCdi();
  },
  10 * 60 * 1000,
);

afterAll(() => {
  for (const f of forwards) f.stop();
  process.stdout.write(`restore timings (s): ${JSON.stringify(timings)}\n`);
  if (!process.env.PULP_KEEP_STACK) {
    pulumi(TARGET, ["stack", "rm", "--force", "--yes"]);
    fs.rmSync(path.join(REPO, `Pulumi.${TARGET}.yaml`), { force: true });
    dropStack(SOURCE, NS);
  }
});

test("the source install holds a file and a remote with a password, and is backed up", async () => {
  mustPulumi(SOURCE, ["up", "--yes", "--skip-preview"]);
  forwards.push(await portForward(NS, "pulp-web", SOURCE_PORT, 8080));
  contentPath = distribute(source, "kept", data);
  pulpCli(source, [
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
  const run = backupTool("now");
  expect({ ok: run.ok, stderr: run.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  backupId = JSON.parse(run.stdout.trim().split("\n").pop()!).id;
});

test("a new stack restores the backup: keys from `npm run backup -- keys`, then one `pulumi up`", async () => {
  writeStackConfig(
    TARGET,
    {
      namespace: NS,
      createNamespace: false,
      instanceName: "restored",
      contentOrigin: target.baseUrl,
      ...ONE_EACH,
      backup: { enabled: false },
      restore: { backup: backupId, claim: "pulp-backups" },
    },
    DEV_STACK,
  );
  mustPulumi(TARGET, ["stack", "init"]);
  // Without the keys the preview refuses, naming the command that sets them.
  const refused = pulumi(TARGET, ["preview"]);
  expect(refused.code).not.toBe(0);
  expect(`${refused.stdout}${refused.stderr}`).toContain(`npm run backup -- keys ${backupId} -n ${NS}`);

  const keys = backupTool("keys", backupId, "--stack", TARGET);
  expect({ ok: keys.ok, stderr: keys.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  expect(keys.stdout).toContain("pulp:dbFieldsEncryptionKey");
  expect(keys.stdout).not.toContain(ADMIN_PASSWORD);

  const up = mustPulumi(TARGET, ["up", "--yes", "--skip-preview"]);
  timings.restoreUp = up.seconds;
  const job = JSON.parse(
    kubectl(["get", "job", "-n", NS, `restored-restore-${backupId.toLowerCase()}`, "-o", "json"]),
  );
  expect(job.status.succeeded).toBe(1);
  const outputs = JSON.parse(mustPulumi(TARGET, ["stack", "output", "--json"]).stdout);
  expect(outputs.restoredBackup).toBe(backupId);
});

test("real clients read everything back from the restored install: login, file, encrypted remote", async () => {
  forwards.push(await portForward(NS, "restored-web", TARGET_PORT, 8080));
  // The old admin password logs in (the restored user, and the key the stack now holds).
  expect(pulpCli(target, ["user", "show", "--username", "admin"]).username).toBe("admin");
  const download = await get(`${target.baseUrl}${contentPath}`);
  expect(download.status).toBe(200);
  expect(sha256(download.body)).toBe(sha256(data));

  // Decrypted with the backup's db-fields key.
  expect(
    inTargetApi(
      "from pulp_file.app.models import FileRemote; print(FileRemote.objects.get(name='private').password)",
    ),
  ).toBe(REMOTE_PASSWORD);
});

test("the same backup id again changes nothing; another id on the live install is refused in preview", () => {
  const again = pulumi(TARGET, ["preview", "--expect-no-changes"]);
  expect({ code: again.code, out: again.code === 0 ? "" : again.stdout.slice(-3000) }).toEqual({
    code: 0,
    out: "",
  });

  // The source gets one more file before its second backup; the restored install gets one of its own.
  later.contentPath = distribute(source, "later", later.data);
  extra.contentPath = distribute(target, "extra", extra.data);
  const second = backupTool("now");
  expect(second.ok).toBe(true);
  otherId = JSON.parse(second.stdout.trim().split("\n").pop()!).id;
  mustPulumi(TARGET, ["config", "set", "--path", "pulp:restore.backup", otherId]);
  const refused = pulumi(TARGET, ["preview"]);
  expect(refused.code).not.toBe(0);
  expect(`${refused.stdout}${refused.stderr}`).toContain(
    `[pulp:restore-refused] pulp:restore.backup is ${otherId}, but this stack is a live install`,
  );
  expect(`${refused.stdout}${refused.stderr}`).toContain(
    `confirm it: pulumi config set --path pulp:restore.overwrite ${otherId}`,
  );
});

test("the second backup comes over http (export, a URL, the real CDI) and replaces the live data with pulp:restore.overwrite", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulp-restore-http-"));
  const archive = path.join(dir, `pulp-backup-${otherId}.tar`);
  const exported = backupTool("export", otherId, "-o", archive);
  expect({ ok: exported.ok, stderr: exported.stderr }).toEqual({ ok: true, stderr: expect.any(String) });
  const url = serveFile(NS, "backup-server", archive);
  // The keys from the archive, as before anything exists (the same keys: one source install).
  const keys = backupTool("keys", otherId, "--archive", archive, "--stack", TARGET);
  expect({ ok: keys.ok, stderr: keys.stderr }).toEqual({ ok: true, stderr: expect.any(String) });

  mustPulumi(TARGET, ["config", "rm", "--path", "pulp:restore.claim"]);
  mustPulumi(TARGET, ["config", "set", "--path", "pulp:restore.http.url", url]);
  mustPulumi(TARGET, ["config", "set", "--path", "pulp:restore.http.size", "1Gi"]);
  mustPulumi(TARGET, ["config", "set", "--path", "pulp:restore.overwrite", otherId]);
  const up = mustPulumi(TARGET, ["up", "--yes", "--skip-preview"]);
  timings.overwriteFromHttpUp = up.seconds;

  // Imported by the real CDI (its importer's phase is on the PVC), then restored over the stopped install.
  const imported = `restored-restore-${otherId.toLowerCase()}`;
  const pvc = JSON.parse(kubectl(["get", "pvc", "-n", NS, imported, "-o", "json"]));
  expect(pvc.metadata.annotations["cdi.kubevirt.io/storage.pod.phase"]).toBe("Succeeded");
  const job = JSON.parse(kubectl(["get", "job", "-n", NS, imported, "-o", "json"]));
  expect(job.status.succeeded).toBe(1);
  const outputs = JSON.parse(mustPulumi(TARGET, ["stack", "output", "--json"]).stdout);
  expect(outputs.restoredBackup).toBe(otherId);

  forwards.push(await portForward(NS, "restored-web", TARGET_PORT_AFTER, 8080));
  const after: Pulp = { ...target, baseUrl: `http://127.0.0.1:${TARGET_PORT_AFTER}` };
  const read = async (p: string) => {
    const r = await get(`${after.baseUrl}${p}`);
    return { status: r.status, sha256: r.status === 200 ? sha256(r.body) : "" };
  };
  // The second backup's files are served; what only the live install held is gone with its database.
  expect(await read(contentPath)).toEqual({ status: 200, sha256: sha256(data) });
  expect(await read(later.contentPath)).toEqual({ status: 200, sha256: sha256(later.data) });
  expect((await read(extra.contentPath)).status).toBe(404);
  expect(pulpCli(after, ["user", "show", "--username", "admin"]).username).toBe("admin");

  // The next update drops the confirmation from the restore's ConfigMap and rolls nothing; then no changes.
  const pods = () =>
    items("pods", NS)
      .filter((p) => /^restored-(api|content|worker)-/.test(p.metadata.name))
      .map((p) => p.metadata.name)
      .sort();
  const before = pods();
  mustPulumi(TARGET, ["up", "--yes", "--skip-preview"]);
  expect(pods()).toEqual(before);
  const again = pulumi(TARGET, ["preview", "--expect-no-changes"]);
  expect({ code: again.code, out: again.code === 0 ? "" : again.stdout.slice(-3000) }).toEqual({
    code: 0,
    out: "",
  });
});
