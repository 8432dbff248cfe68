// What an operator of a real install runs beside it: the backup tool and the doctor as a person runs them,
// and Python in an api pod's own Pulp.
import * as fs from "fs";
import * as path from "path";
import { restoreRules } from "../../components/backup/restore";
import { items, kubectl, shippedTool } from "../harness";
import { pulumiEnv, REPO, toolchainBin } from "../local/environment";

export interface ToolRun {
  ok: boolean;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** `npm run backup -- <command> -n <namespace>` with the bed's kubectl and pulumi. */
export function backupTool(namespace: string, ...command: string[]): ToolRun {
  const r = shippedTool("backup", [...command, "-n", namespace], {
    env: { ...pulumiEnv(), PULP_PULUMI: path.join(toolchainBin(), "pulumi") },
  });
  return { ok: r.code === 0, stdout: r.stdout, stderr: `${r.stderr}${r.error ?? ""}`, seconds: r.seconds };
}

/** `npm run doctor -- -n <namespace> -o json` with the bed's kubectl: its exit code and its findings. */
export function doctor(namespace: string): {
  code: number | null;
  findings: { severity: string; subject: string; what: string; fix: string }[];
  /** Whether the doctor read Pulp's task queue in an api pod, and what it found or why not. */
  tasks: { ok: boolean; queue?: Record<string, number | null>; error?: string };
  stderr: string;
} {
  const r = shippedTool("doctor", ["-n", namespace, "-o", "json"], { timeoutMs: 2 * 60 * 1000 });
  const report = r.stdout.trim()
    ? JSON.parse(r.stdout)
    : { findings: [], snapshot: { tasks: { ok: false } } };
  return {
    code: r.code,
    findings: report.findings,
    tasks: report.snapshot.tasks,
    stderr: `${r.stderr}${r.error ?? ""}`,
  };
}

/** The JSON line a backup tool command prints last (`now`: the backup's id and sizes). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command prints its own shape
export function lastJsonLine(run: ToolRun): any {
  return JSON.parse(run.stdout.trim().split("\n").pop()!);
}

/**
 * Python for pulpShell that defines `connection` (Django's), `s` (its settings), `base` (libpq's parameters
 * from them) and `attempt(**changes)`: a connection with those parameters changed, "connected" or libpq's
 * error. What a test changes (another CA, an address for the name) says whether the server is verified.
 */
export const PULP_LIBPQ = `
import json, socket
from django.db import connection
import psycopg
s = connection.settings_dict
base = dict(host=s["HOST"], port=s["PORT"], dbname=s["NAME"], user=s["USER"], password=s["PASSWORD"],
            sslmode=s["OPTIONS"]["sslmode"], sslrootcert=s["OPTIONS"]["sslrootcert"], connect_timeout=5)
def attempt(**changes):
    try:
        psycopg.connect(**{**base, **changes}).close()
        return "connected"
    except psycopg.OperationalError as e:
        return str(e)
`;

/** The name of a running api pod of `instance`; fails naming the namespace when there is none. */
export function runningApiPod(namespace: string, instance = "pulp"): string {
  const pod = items("pods", namespace).find(
    (p) => p.metadata.name.startsWith(`${instance}-api-`) && p.status.phase === "Running",
  );
  if (!pod) throw new Error(`no running ${instance}-api pod in ${namespace}`);
  return pod.metadata.name;
}

/** A file as a running api pod of `instance` sees it (its settings.py, a mounted token). */
export function apiFile(namespace: string, file: string, instance = "pulp"): string {
  return kubectl([
    "exec",
    "-n",
    namespace,
    runningApiPod(namespace, instance),
    "-c",
    "api",
    "--",
    "cat",
    file,
  ]);
}

/**
 * Runs Python in a running api pod of `instance` with `pulpcore-manager shell` (the settings as the pod
 * reads them); returns only what `code` prints.
 */
export function pulpShell(namespace: string, instance: string, code: string): string {
  return kubectl([
    "exec",
    "-n",
    namespace,
    runningApiPod(namespace, instance),
    "-c",
    "api",
    "--",
    "pulpcore-manager",
    "shell",
    "-c",
    code,
  ]).trim();
}

export interface ArtifactCheck {
  artifacts: number;
  bytes: number;
  /** Artifacts whose file is missing, or whose sha256 is not the one the database holds. */
  bad: number;
}

/** Every artifact the install's database names, read from its storage and hashed in an api pod. */
export function checkArtifacts(namespace: string, instance: string): ArtifactCheck {
  const code = [
    "import hashlib, json",
    "from pulpcore.app.models import Artifact",
    "n = size = bad = 0",
    "for a in Artifact.objects.all().iterator():",
    "    n += 1; size += a.size; h = hashlib.sha256()",
    "    try:",
    "        with a.file.open('rb') as f:",
    "            for chunk in iter(lambda: f.read(1 << 20), b''): h.update(chunk)",
    "    except FileNotFoundError:",
    "        bad += 1; continue",
    "    bad += h.hexdigest() != a.sha256",
    "print(json.dumps({'artifacts': n, 'bytes': size, 'bad': bad}))",
  ].join("\n");
  return JSON.parse(pulpShell(namespace, instance, code).split("\n").pop()!);
}

/**
 * restoreCheck.py (what a restore into this install runs first) in a running api pod, with Pulp's own
 * storage clients and the credentials the pod has, over a backup `id` laid out in /tmp whose artifacts are in
 * `target` (backup.ts storageName) and which references `names`. `env` is shell assignments the check
 * needs beyond the pod's own (Azure's connection string under its name). Its verdict: what it printed, and
 * the refusal it left.
 */
export function restoreCheckInApi(
  namespace: string,
  id: string,
  target: string,
  names: string[],
  env = "",
): { out: string; refusal: string } {
  const manifest = { id, artifacts: { storage: target, files: 0 }, versions: { pulpcore: "3.123.1" } };
  const script = [
    'py=$(sed -n "1s/^#!//p" /usr/local/bin/pulpcore-manager)',
    `b=/tmp/${id} && rm -rf $b /tmp/${id}.refusal && mkdir -p $b`,
    `printf '%s' '${JSON.stringify(manifest)}' > $b/manifest.json`,
    `printf '${names.map((n) => `${n}\\n`).join("")}' > $b/artifacts.list`,
    "cat > /tmp/restoreCheck.py",
    `BACKUP_DIR=$b TARGET_STORAGE=${target} TERMINATION_LOG=/tmp/${id}.refusal ` +
      `RESTORE_RULES='${JSON.stringify(restoreRules())}' ${env} "$py" /tmp/restoreCheck.py || true`,
    `cat /tmp/${id}.refusal 2>/dev/null || true`,
  ].join("\n");
  const out = kubectl(
    ["exec", "-i", "-n", namespace, runningApiPod(namespace), "-c", "api", "--", "sh", "-c", script],
    fs.readFileSync(path.join(REPO, "components/backup/restoreCheck.py"), "utf8"),
  );
  return {
    out,
    refusal: out
      .split("\n")
      .filter((l) => l.startsWith("restore refused"))
      .join("\n"),
  };
}

/** Restarts of the Pulp containers (api, content, worker, web) of the namespace, by pod; pods without any left out. */
export function restartedPulpContainers(namespace: string): Record<string, number> {
  return Object.fromEntries(
    items("pods", namespace)
      .filter((p) => /^pulp-(api|content|worker|web)-/.test(p.metadata.name))
      .map((p) => [p.metadata.name, p.status.containerStatuses?.[0]?.restartCount ?? 0])
      .filter(([, n]) => (n as number) > 0),
  );
}
