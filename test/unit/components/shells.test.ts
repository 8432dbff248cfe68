// Unit: the program's shell scripts run under both shells users' images and the test bed's have.
// Users pull quay.io/pulp/pulp-minimal and pulp-web (CentOS, where /bin/sh is bash); the test bed's images
// are Debian's (/bin/sh is dash). Every `/bin/sh -c` script the rendered install runs (commands, exec
// probes, preStop hooks, taken from the resources under Pulumi mocks) must be POSIX: shellcheck as sh,
// and `-n` under dash and bash. The ones that can run here run under both shells with stand-ins for the
// image's files. backup.sh and restore.sh are bash scripts, run as `/bin/bash <file>` in a PostgreSQL
// image (their runs: backup/restoreChecks.test.ts). docs/reference/images.md lists what the images hold.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { MIGRATE_PY, MIGRATE_SCRIPT, PRE_MIGRATE_SCRIPT } from "../../../components/migration/migrationJob";
import { NGINX_GRACEFUL_STOP } from "../../../components/web/pulpWeb";
import { SIGNING_FILES } from "../../../components/signing/signing";
import {
  initDirsContainer,
  processCommand,
  PULP_PYTHON,
  pulpProbes,
} from "../../../components/workload/pulpProcess";
import { CA, MINIMAL } from "../helpers/configs";
import { MockRun, Registered } from "../helpers/pulumiMocks";
import { render } from "../helpers/render";
import { NO_PROBE_TUNING, pulpRuntime } from "../helpers/runtime";

const SHELLS = ["dash", "bash"] as const;
const MANAGER = "/usr/local/bin/pulpcore-manager";

/** Fails (does not skip) when a shell or shellcheck is missing, saying what to install. */
function need(tool: string, pkg: string): string {
  const found = spawnSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" });
  if (found.status !== 0) throw new Error(`${tool} is not on PATH: apt-get install ${pkg}`);
  return found.stdout.trim();
}

// A throwaway self-signed CA made for trustedCa.test.ts (its key was never kept).
const PG_IMAGE = "ghcr.io/cloudnative-pg/postgresql:16.4";
const KEYS = {
  adminPassword: "old-admin-Pw1",
  secretKey: "shells-test-secret-key-0123456789abcdefghijklmnopq",
  dbFieldsEncryptionKey: "Vq3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=",
};

/** Installs that between them create every pod the program makes. */
const INSTALLS: [string, Record<string, unknown>, Record<string, string>][] = [
  [
    "web, redis, trusted CAs, backups to S3, a release before 3.81.0 (the bind script)",
    {
      ...MINIMAL,
      image: "quay.io/pulp/pulp-minimal:3.80.0",
      database: { cloudnativepg: { imageName: PG_IMAGE } },
      web: { enabled: true },
      redis: { enabled: true },
      trustedCa: { certificates: CA },
      backup: {
        enabled: true,
        s3: { bucket: "pulp-backups", endpointUrl: "https://s3.example.com", accessKeyId: "AKIAEXAMPLE" },
      },
    },
    { backupS3SecretAccessKey: "backup-s3-Secret-5e1" },
  ],
  [
    "signing services",
    { ...MINIMAL, signing: { services: [{ name: "rpm-metadata", kind: "detached" }] } },
    { signingKey: "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nx\n-----END PGP PRIVATE KEY BLOCK-----" },
  ],
  [
    "a restore",
    {
      ...MINIMAL,
      database: { cloudnativepg: { imageName: PG_IMAGE } },
      restore: { backup: "20261124T031500Z" },
    },
    KEYS,
  ],
];

/** Every command array in a resource's inputs: container commands, exec probes, lifecycle hooks. */
function commands(value: unknown, out: string[][] = []): string[][] {
  if (Array.isArray(value)) {
    if (value.length > 0 && (value[0] === "/bin/sh" || value[0] === "/bin/bash")) out.push(value as string[]);
    else value.forEach((v) => commands(v, out));
  } else if (value && typeof value === "object") {
    Object.values(value).forEach((v) => commands(v, out));
  }
  return out;
}

let runs: MockRun[];
const rendered = () => runs.flatMap((run) => run.resources.flatMap((r: Registered) => commands(r.inputs)));
const shScripts = () => [
  ...new Set(
    rendered()
      .filter((c) => c[0] === "/bin/sh" && c[1] === "-c")
      .map((c) => c[2]),
  ),
];

beforeAll(async () => {
  runs = [];
  for (const [, raw, secrets] of INSTALLS) runs.push(await render(raw, secrets));
}, 120000);

/** Problems in a script as POSIX sh: shellcheck's, and each shell's own `-n`. */
function posixProblems(script: string): string[] {
  const problems: string[] = [];
  const check = spawnSync("shellcheck", ["--shell=sh", "--severity=warning", "--format=gcc", "-"], {
    input: script,
    encoding: "utf8",
  });
  if (check.status !== 0) problems.push(`shellcheck: ${check.stdout}${check.stderr}`.trim());
  for (const shell of SHELLS) {
    const r = spawnSync(shell, ["-n", "-c", script], { encoding: "utf8" });
    if (r.status !== 0) problems.push(`${shell} -n: ${r.stderr.trim()}`);
  }
  return problems;
}

test("dash, bash and shellcheck are here (the checks below need all three)", () => {
  need("dash", "dash");
  need("bash", "bash");
  need("shellcheck", "shellcheck");
});

test("the check fails on bash-only constructs, which dash -n alone lets through", () => {
  const bashism = 'x=$1\n[[ -n $x ]] && echo "${x//a/b}"';
  expect(spawnSync("dash", ["-n", "-c", bashism]).status).toBe(0);
  const found = posixProblems(bashism).join("\n");
  for (const code of ["SC3010", "SC3060"]) expect(found).toContain(code);
  expect(posixProblems('cat <<<"$1"').join("\n")).toContain("SC3011");
  const r = spawnSync("dash", ["-c", bashism, "sh", "abc"], { encoding: "utf8" });
  expect(r.status).not.toBe(0);
});

test("every /bin/sh -c script the install renders is POSIX sh (shellcheck, dash -n, bash -n)", () => {
  const scripts = shScripts();
  // init-dirs, the content and worker probes, both preStop hooks, the bind script, migrate and reset,
  // the CA bundle, the backup's versions and upload, the restore check: at least this many distinct ones.
  expect(scripts.length).toBeGreaterThanOrEqual(10);
  const problems = scripts.flatMap((s) => posixProblems(s).map((p) => `${p}\n--- in:\n${s.slice(0, 300)}`));
  expect(problems).toEqual([]);
});

test("the scripts only bash runs are bash scripts and are started with /bin/bash, never /bin/sh", () => {
  const bash = rendered().filter((c) => c[0] === "/bin/bash");
  expect(bash.map((c) => c.slice(1)).sort()).toEqual([
    ["/opt/backup/backup.sh"],
    ["/opt/restore/restore.sh"],
  ]);
  for (const file of ["backup/backup.sh", "backup/restore.sh"]) {
    const text = fs.readFileSync(path.join(__dirname, "../../../components", file), "utf8");
    expect(text.split("\n")[0]).toBe("#!/bin/bash");
    expect(text).toContain("set -euo pipefail");
    expect(spawnSync("bash", ["-n", "-c", text]).status).toBe(0);
  }
  // No /bin/sh -c script sources or runs them (they are bash-only: [[ ]], <<<, process substitution).
  for (const s of shScripts()) expect(s).not.toMatch(/backup\.sh|restore\.sh/);
});

// Stand-ins for the image: a directory whose pulpcore-manager's shebang names the "interpreter" the
// program must find and use.
function standIns(interpreter: string): { dir: string; manager: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "shells-"));
  const manager = path.join(dir, "pulpcore-manager");
  fs.writeFileSync(manager, `#!${interpreter}\nprint("pulpcore-manager")\n`, { mode: 0o755 });
  return { dir, manager };
}

const run = (shell: string, script: string, args: string[] = [], env: Record<string, string> = {}) =>
  spawnSync(shell, ["-c", script, ...args], { encoding: "utf8", env: { ...process.env, ...env } });

describe.each(SHELLS)("under %s", (shell) => {
  test("PULP_PYTHON finds the interpreter from pulpcore-manager's shebang (Debian's and CentOS's paths)", () => {
    for (const interpreter of ["/usr/bin/python3", "/usr/bin/python3.9", "/usr/bin/python3.11"]) {
      const { manager } = standIns(interpreter);
      const r = run(shell, `${PULP_PYTHON.replace(MANAGER, manager)}\nprintf '%s' "$py"`);
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe(interpreter);
    }
  });

  test("init-dirs makes media/ and tmp/ in the data volume", () => {
    const { dir } = standIns("/usr/bin/python3");
    const script = (initDirsContainer(pulpRuntime()).command as string[])[2];
    const r = run(shell, script.split("/var/lib/pulp").join(dir));
    expect(r.status).toBe(0);
    expect(fs.statSync(path.join(dir, "media")).isDirectory()).toBe(true);
    expect(fs.statSync(path.join(dir, "tmp")).isDirectory()).toBe(true);
  });

  test("the content probe hands its script and arguments to Pulp's python", () => {
    const { manager } = standIns(need("python3", "python3"));
    const startup = pulpProbes("content", pulpRuntime(), NO_PROBE_TUNING).startupProbe as {
      exec: { command: string[] };
    };
    const probe = startup.exec.command;
    expect(probe.slice(0, 2)).toEqual(["/bin/sh", "-c"]);
    // Nothing listens on port 9: the check must say so for its first path and fail.
    const args = probe.slice(3).map((a) => (a === "24816" ? "9" : a));
    const r = run(shell, probe[2].replace(MANAGER, manager), args);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^content app: HEAD \/pulp\/content\/ -> /);
  });

  describe("the bind script (releases before 3.81.0) finds pulpcore-api on PATH, as the entry script does", () => {
    // The entry script as upstream's pulp-api: `pulpcore-api` by name, found on PATH.
    const setup = (hasIpv6: boolean) => {
      const { dir, manager } = standIns("");
      const py = path.join(dir, "python");
      fs.writeFileSync(py, `#!/bin/sh\nexit ${hasIpv6 ? 0 : 1}\n`, { mode: 0o755 });
      fs.writeFileSync(manager, `#!${py}\n`, { mode: 0o755 });
      const bin = path.join(dir, "bin");
      fs.mkdirSync(bin);
      fs.writeFileSync(path.join(bin, "pulpcore-api"), '#!/bin/sh\necho "pulpcore-api $*"\n', {
        mode: 0o755,
      });
      fs.writeFileSync(path.join(bin, "pulp-api"), "#!/bin/sh\nexec pulpcore-api --workers 2\n", {
        mode: 0o755,
      });
      const command = processCommand("api", pulpRuntime({ pulpcoreVersion: "3.80.0" }));
      expect(command.slice(0, 2)).toEqual(["/bin/sh", "-c"]);
      expect(command.slice(3)).toEqual(["bind", "pulp-api", "pulpcore-api", "24817"]);
      const args = command.slice(3).map((a) => (a === "pulp-api" ? path.join(bin, "pulp-api") : a));
      return run(shell, command[2].replace(MANAGER, manager), args, {
        PATH: `${bin}:${process.env.PATH}`,
        TMPDIR: dir,
      });
    };
    test("without IPv6 it binds 0.0.0.0", () => {
      const r = setup(false);
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe(
        "no IPv6 here: pulpcore-api binds 0.0.0.0:24817\npulpcore-api --bind 0.0.0.0:24817 --workers 2\n",
      );
    });
    test("with IPv6 it runs as the image has it", () => {
      expect(setup(true).stdout).toBe("pulpcore-api --workers 2\n");
    });
  });

  test("the migration script feeds preMigrate.py, then migrate.py, to Pulp's python, and nothing else", () => {
    const { dir, manager } = standIns("");
    const log = path.join(dir, "log");
    const py = path.join(dir, "python");
    // As Pulp's python: `-` reads a script from stdin (kept as stdin-<n>.py); anything else is a manager call.
    fs.writeFileSync(
      py,
      `#!/bin/sh\nn=$(($(cat ${log} 2>/dev/null | wc -l) + 1))\n` +
        `if [ "$1" = - ]; then shift; echo "python - $*" >>${log}; cat >${dir}/stdin-$n.py; exit 0; fi\n` +
        `shift; echo "pulpcore-manager $*" >>${log}\n`,
      { mode: 0o755 },
    );
    fs.writeFileSync(manager, `#!${py}\n`, { mode: 0o755 });
    const r = run(shell, MIGRATE_SCRIPT.split(MANAGER).join(manager), [], {
      ADMIN_PASSWORD: "-pw with 'quotes'",
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(fs.readFileSync(log, "utf8").trim().split("\n")).toEqual([
      "python - /etc/pulp/settings.py",
      "python -",
    ]);
    expect(fs.readFileSync(path.join(dir, "stdin-1.py"), "utf8")).toBe(`${PRE_MIGRATE_SCRIPT.trimEnd()}\n`);
    expect(fs.readFileSync(path.join(dir, "stdin-2.py"), "utf8")).toBe(`${MIGRATE_PY.trimEnd()}\n`);
  });

  test("pulp-web's preStop asks nginx to quit and waits until its pid file is gone", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "shells-"));
    const pid = path.join(dir, "nginx.pid");
    fs.writeFileSync(pid, "1\n");
    fs.writeFileSync(
      path.join(dir, "nginx"),
      `#!/bin/sh\n[ "$*" = "-s quit" ] || exit 2\n(sleep 1; rm -f ${pid}) >/dev/null 2>&1 &\n`,
      { mode: 0o755 },
    );
    expect(NGINX_GRACEFUL_STOP).toContain("sleep 10;");
    const script = NGINX_GRACEFUL_STOP.replace("sleep 10;", "sleep 0;").split("/tmp/nginx.pid").join(pid);
    const r = run(shell, script, [], { PATH: `${dir}:${process.env.PATH}` });
    expect(r.status).toBe(0);
    expect(fs.existsSync(pid)).toBe(false);
  });

  test("the CA bundle: the image's own CAs (python3's idea of OpenSSL's file), then the trusted ones", () => {
    const script = shScripts().find((s) => s.includes("ca-bundle.crt"));
    expect(script).toBeDefined();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "shells-"));
    fs.mkdirSync(path.join(dir, "trusted-ca"));
    fs.mkdirSync(path.join(dir, "ca-bundle"));
    fs.writeFileSync(path.join(dir, "trusted-ca", "ca.crt"), CA);
    const local = script!
      .split("/etc/pulp/trusted-ca")
      .join(path.join(dir, "trusted-ca"))
      .split("/etc/pulp/ca-bundle")
      .join(path.join(dir, "ca-bundle"));
    const r = run(shell, local);
    expect(r.status).toBe(0);
    const bundle = fs.readFileSync(path.join(dir, "ca-bundle", "ca-bundle.crt"), "utf8");
    expect(bundle.endsWith(`${CA}\n`)).toBe(true);
  });

  test("the backup's versions and upload, and the restore check, run Pulp's python on their files", () => {
    const { dir, manager } = standIns("");
    const py = path.join(dir, "python");
    fs.writeFileSync(py, '#!/bin/sh\nprintf "%s|" "$@"\n', { mode: 0o755 });
    fs.writeFileSync(manager, `#!${py}\n`, { mode: 0o755 });
    const byFile = (needle: string) => shScripts().find((s) => s.includes(needle))!;
    const upload = run(shell, byFile("/opt/backup/upload.py").replace(MANAGER, manager));
    expect(upload.stdout).toBe("/opt/backup/upload.py|");
    const check = run(shell, byFile("/opt/restore/restoreCheck.py").replace(MANAGER, manager));
    expect(check.stdout).toBe("/opt/restore/restoreCheck.py|");
    const versions = byFile("/run/backup/versions.json");
    const out = run(shell, versions.replace(MANAGER, manager).split("/run/backup").join(dir));
    expect(out.status).toBe(0);
    expect(fs.readFileSync(path.join(dir, "versions.json"), "utf8")).toMatch(
      /^-c\|import importlib\.metadata/,
    );
  });
});

test("the signing scripts the workers and the registering Job run (files of a ConfigMap) are POSIX sh", () => {
  const scripts = Object.entries(SIGNING_FILES).filter(([file]) => file.endsWith(".sh"));
  expect(scripts.map(([file]) => file).sort()).toEqual(["apt.sh", "detached.sh", "import-key.sh"]);
  for (const [file, script] of scripts)
    expect({ file, problems: posixProblems(script) }).toEqual({ file, problems: [] });
  // And the init container runs one as a file, with the key's path: not a `-c` script.
  const init = rendered().find((c) => c[1] === "/etc/pulp/signing/scripts/import-key.sh");
  expect(init).toEqual([
    "/bin/sh",
    "/etc/pulp/signing/scripts/import-key.sh",
    "/etc/pulp/signing/key/signing.asc",
  ]);
});
