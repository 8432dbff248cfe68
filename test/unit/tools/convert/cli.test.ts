// Unit test (no Pulumi engine, no cluster: stand-in kubectl and pulumi): the pulp-convert command. Proves
// its arguments; the exact script for a sample CR; exit codes 0, 2 (the problems on stderr) and 1; JSON that
// parseArgs takes; no secret of the samples in any output; and the script itself, run by bash, writes with
// `pulumi config set` exactly the converted config, while each secret reaches `pulumi config set --secret`
// on stdin only, never on a command line or in the script's output.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { decode } from "../../../../components/config/load";
import { parseArgs as programArgs } from "../../../../components/config/programArgs";
import { SecretName } from "../../../../components/config/rules";
import { ToolError } from "../../../../tools/kube";
import { Args, convert, main, parseArgs } from "../../../../tools/convert/main";
import { setCommand } from "../../../../components/config/problems";
import { renderScript } from "../../../../tools/convert/render";
import { canaries, convertSample, FIXTURES, Sample, SAMPLES } from "./samples";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "convert-cli-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** convert() on a sample file: the exit code and both outputs. */
function run(sample: Sample, more: Partial<Args> = {}): { code: number; out: string; err: string } {
  let out = "";
  let err = "";
  const code = convert(
    { file: path.join(FIXTURES, `${sample}.yaml`), json: false, keyMap: false, ...more },
    (s) => (out += s),
    (s) => (err += s),
  );
  return { code, out, err };
}

test("arguments: a file or the cluster, the CR, the namespace, the instance, the output, a kubeconfig", () => {
  expect(parseArgs([])).toEqual({ json: false, keyMap: false });
  expect(
    parseArgs([
      "-f",
      "-",
      "--name",
      "example",
      "-n",
      "pulp",
      "--instance",
      "new",
      "-o",
      "json",
      "--kubeconfig",
      "k",
    ]),
  ).toEqual({
    file: "-",
    name: "example",
    namespace: "pulp",
    instance: "new",
    json: true,
    kubeconfig: "k",
    keyMap: false,
  });
  expect(parseArgs(["-o", "sh", "--key-map"])).toEqual({ json: false, keyMap: true });
  expect(() => parseArgs(["-n"])).toThrow(/^-n needs a value; usage: pulp-convert /);
  expect(() => parseArgs(["-o", "yaml"])).toThrow(/^-o yaml: json or sh; usage: /);
  expect(() => parseArgs(["--frobnicate"])).toThrow(/^unexpected --frobnicate; usage: /);
});

test("the script for a CR of the operator's defaults behind an nginx Ingress, exactly; exit 0", () => {
  const { code, out, err } = run("nginx-ingress", { kubeconfig: "/home/me/.kube/ops config" });
  expect({ code, err }).toEqual({ code: 0, err: "" });
  const file = path.join(FIXTURES, "nginx-ingress.yaml");
  expect(out).toBe(
    [
      "#!/usr/bin/env bash",
      `# pulp-convert: the pulp-operator Pulp CR pulp/pulp (${file}) as this project's stack config.`,
      "# Run it with a new stack selected (pulumi stack init), from the project's directory, with kubectl",
      "# reaching the operator's cluster: the secrets are read from its Secrets in namespace pulp",
      "# and go into the stack config encrypted, never printed. docs/migrate-from-pulp-operator.md says what",
      "# it does not do yet.",
      "#",
      "# Notes: fields with no equivalent here, or a decision to check:",
      "#   database: the operator runs PostgreSQL itself (StatefulSet pulp-database): this install uses that " +
        "database in place, as database.external, and does not manage it. Delete the Pulp CR with " +
        "--cascade=orphan before pulumi up, or deleting it later deletes the database " +
        "(docs/migrate-from-pulp-operator.md). To move it into CloudNativePG later: a backup of this install " +
        "restored into one with database.cloudnativepg",
      "#   file_storage_storage_class: no storage given: the operator kept artifacts in an emptyDir (lost with " +
        "each pod); here they get a volume (storage.pvc, 50Gi by default)",
      '#   image_version: "stable" is a floating tag, refused here (nodes could pull different builds): pin the ' +
        "release the operator's pods run, pulumi config set pulp:image 'quay.io/pulp/pulp-minimal:<version>'; " +
        "until then the program's default image applies",
      "set -euo pipefail",
      "",
      "pulumi config set pulp:namespace pulp",
      "pulumi config set pulp:createNamespace false",
      "pulumi config set pulp:instanceName pulp-pulumi",
      "pulumi config set --path 'pulp:ingress.enabled' true",
      "pulumi config set --path 'pulp:ingress.kind' Ingress",
      "pulumi config set --path 'pulp:ingress.host' pulp.internal.example.com",
      "pulumi config set pulp:contentOrigin http://pulp.internal.example.com",
      "pulumi config set --path 'pulp:web.enabled' false",
      "pulumi config set --path 'pulp:api.replicas' 1",
      "pulumi config set --path 'pulp:content.replicas' 1",
      "pulumi config set --path 'pulp:worker.replicas' 1",
      "pulumi config set --path 'pulp:database.external.host' pulp-database-svc",
      "pulumi config set --path 'pulp:database.external.port' 5432",
      "pulumi config set --path 'pulp:database.external.name' pulp",
      "pulumi config set --path 'pulp:database.external.user' pulp",
      "pulumi config set --path 'pulp:database.external.sslmode' prefer",
      "pulumi config set --plaintext pulp:tokenAuth true",
      "",
      "# Secrets: from the operator's Secrets to the stack config, never shown.",
      "kubectl --kubeconfig '/home/me/.kube/ops config' get secret -n pulp pulp-admin-password -o " +
        "jsonpath='{.data.password}' | base64 -d | pulumi config set --secret pulp:adminPassword",
      "kubectl --kubeconfig '/home/me/.kube/ops config' get secret -n pulp pulp-secret-key -o " +
        "jsonpath='{.data.secret_key}' | base64 -d | pulumi config set --secret pulp:secretKey",
      "kubectl --kubeconfig '/home/me/.kube/ops config' get secret -n pulp pulp-db-fields-encryption -o " +
        "jsonpath='{.data.database_fields\\.symmetric\\.key}' | base64 -d | pulumi config set --secret " +
        "pulp:dbFieldsEncryptionKey",
      "kubectl --kubeconfig '/home/me/.kube/ops config' get secret -n pulp pulp-postgres-configuration -o " +
        "jsonpath='{.data.password}' | base64 -d | pulumi config set --secret pulp:databasePassword",
      "",
    ].join("\n"),
  );
});

test("exit 2: the script, and on stderr what the stack config will still need, with the fix", () => {
  const { code, out, err } = run("route-file-storage");
  expect(code).toBe(2);
  expect(out).toContain("pulumi config set --path 'pulp:backup.enabled' true\n");
  expect(err).toBe(
    "Invalid Pulp stack config (1 problem); run the fixes after the script, before pulumi preview:\n" +
      "  - pulp:backup.image: backups run pg_dump, and no PostgreSQL image is known: set one whose major version " +
      "is at least the database server's (the default is database.cloudnativepg.imageName, which is not set)\n" +
      "      given: (not set)\n" +
      "      fix:   pulumi config set --path 'pulp:backup.image' ghcr.io/cloudnative-pg/postgresql:17\n" +
      "(the converted config, as the stack will hold it once the script has run)\n",
  );
});

test("exit 1 (a ToolError): an unreadable file, a CR that names a Secret the file lacks", () => {
  expect(() =>
    convert(
      { file: path.join(dir, "nope.yaml"), json: false, keyMap: false },
      () => {},
      () => {},
    ),
  ).toThrow(/^cannot read .*nope\.yaml: ENOENT/);
  const partial = path.join(dir, "partial.yaml");
  fs.writeFileSync(
    partial,
    fs.readFileSync(path.join(FIXTURES, "example-2.0.0.yaml"), "utf8").split("\n---\n")[0],
  );
  expect(() =>
    convert(
      { file: partial, json: false, keyMap: false },
      () => {},
      () => {},
    ),
  ).toThrow(
    new ToolError(
      "cannot convert:\n" +
        "  - custom_pulp_settings names the ConfigMap example-settings, which holds settings: convert from the " +
        "cluster, or add it to the file (kubectl get configmap -n pulp example-settings -o yaml)\n" +
        "  - database.external_db_secret names the Secret example-external-db, which holds config (POSTGRES_HOST): " +
        "convert from the cluster, or add the Secret to the file (kubectl get secret -n pulp example-external-db -o yaml)",
    ),
  );
});

test("-o json: the config parseArgs takes, where each secret comes from, the notes", () => {
  const { code, out } = run("ingress-s3", { json: true });
  expect(code).toBe(0);
  const json = JSON.parse(out);
  expect(Object.keys(json)).toEqual(["config", "secrets", "notes", "problems"]);
  expect(json.config).toEqual(convertSample("ingress-s3").config);
  expect(json.secrets.databasePassword).toEqual({ secret: "alpha-db", key: "POSTGRES_PASSWORD" });
  expect(json.notes[0]).toEqual({
    field: "api.env_vars API_TOKEN",
    text: expect.stringMatching(/^a literal value whose name looks like a credential is not copied/),
  });
  expect(json.problems).toEqual([]);
  const config = programArgs(json.config, Object.keys(json.secrets) as SecretName[]);
  expect(config.storage.s3?.bucket).toBe("pulp-artifacts");
});

test("--plaintext where the Pulumi CLI would take a name for a secret, but not beside --type", () => {
  expect(setCommand("pulp:ingress.tlsSecretName", "pulp-example-tls")).toBe(
    "pulumi config set --plaintext --path 'pulp:ingress.tlsSecretName' pulp-example-tls",
  );
  expect(setCommand("pulp:imagePullSecrets[0]", "registry")).toBe(
    "pulumi config set --plaintext --path 'pulp:imagePullSecrets[0]' registry",
  );
  expect(setCommand("pulp:tokenAuth", true)).toBe("pulumi config set --plaintext pulp:tokenAuth true");
  expect(setCommand("pulp:x.token", "1")).toBe("pulumi config set --path 'pulp:x.token' --type string 1");
  expect(setCommand("pulp:ingress.host", "pulp.example.com")).toBe(
    "pulumi config set --path 'pulp:ingress.host' pulp.example.com",
  );
});

test("--help and --key-map print and exit 0", async () => {
  const written: string[] = [];
  const spy = jest.spyOn(process.stdout, "write").mockImplementation((s) => written.push(String(s)) > 0);
  try {
    expect(await main(["--help"])).toBe(0);
    expect(await main(["--key-map"])).toBe(0);
  } finally {
    spy.mockRestore();
  }
  expect(written[0]).toMatch(/^usage: pulp-convert \[-f <file>\|-\]/);
  expect(written[1]).toMatch(
    /^\| pulp-operator field \| here \|\n\| --- \| --- \|\n\| `admin_password_job` \|/,
  );
});

test("no secret of the samples reaches the script, the JSON, a note or a problem", () => {
  const secrets = canaries();
  expect(secrets.length).toBeGreaterThanOrEqual(16);
  for (const sample of SAMPLES) {
    const outputs = [run(sample), run(sample, { json: true })].map((r) => r.out + r.err).join("\n");
    expect({ sample, found: secrets.filter((s) => outputs.includes(s)) }).toEqual({ sample, found: [] });
  }
});

/** A pulumi config path (`pulp:a.b[0]["c.d"]`) as its parts. */
function pathParts(key: string): (string | number)[] {
  const parts: (string | number)[] = [];
  let rest = key.replace(/^pulp:/, "");
  while (rest) {
    const m = /^(?:\.?([A-Za-z_][\w-]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\])/.exec(rest);
    if (!m) throw new Error(`cannot read the path ${key} at ${rest}`);
    parts.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : JSON.parse(`"${m[3]}"`)));
    rest = rest.slice(m[0].length);
  }
  return parts;
}

/** The stack config the recorded `pulumi config set` calls leave, typed as the CLI and loadConfig type it. */
function replay(records: { args: string[]; stdin?: string }[]) {
  const config: Record<string, unknown> = {};
  const secrets: Record<string, string> = {};
  for (const { args, stdin } of records) {
    expect(args.slice(0, 3)).toEqual(["config", "set", ...args.slice(2, 3)]);
    const flags = args.filter((a) => a.startsWith("--"));
    const words = args.slice(2).filter((a, i, all) => !a.startsWith("--") && all[i - 1] !== "--type");
    const [key, value] = words;
    if (flags.includes("--secret")) {
      expect({ key, value }).toEqual({ key, value: undefined });
      secrets[key] = stdin!;
      continue;
    }
    const type = args[args.indexOf("--type") + 1];
    const typed = !flags.includes("--path")
      ? decode(value)
      : flags.includes("--type")
        ? type === "float"
          ? Number(value)
          : value
        : /^(true|false)$/.test(value)
          ? value === "true"
          : /^-?\d+$/.test(value)
            ? Number(value)
            : value;
    const parts = pathParts(key);
    let at: Record<string | number, unknown> = config;
    parts.slice(0, -1).forEach((part, i) => {
      at[part] ??= typeof parts[i + 1] === "number" ? [] : {};
      at = at[part] as Record<string | number, unknown>;
    });
    at[parts[parts.length - 1]] = typed;
  }
  return { config, secrets };
}

test.each(["example-2.0.0", "ingress-s3"] as const)(
  "the %s script, run by bash: exactly the converted config, and the secrets through stdin only",
  (sample) => {
    const conversion = convertSample(sample);
    // What the operator's Secrets hold in the cluster, by secret/key.
    const values: Record<string, string> = {};
    for (const [name, from] of Object.entries(conversion.secrets))
      values[`${from.secret}/${from.key}`] = `CANARY-run-${name}`;
    const bin = path.join(dir, `bin-${sample}`);
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, "values.json"), JSON.stringify(values));
    fs.writeFileSync(
      path.join(bin, "kubectl"),
      `#!/usr/bin/env node
const args = process.argv.slice(2);
const values = require(${JSON.stringify(path.join(bin, "values.json"))});
const [verb, kind, n, ns, name, o, jsonpath] = args;
const key = /^jsonpath=\\{\\.data\\.(.*)\\}$/.exec(jsonpath)[1].replace(/\\\\\\./g, ".");
if (verb !== "get" || kind !== "secret" || n !== "-n" || ns !== ${JSON.stringify(conversion.config.namespace)} || o !== "-o") process.exit(3);
process.stdout.write(Buffer.from(values[name + "/" + key]).toString("base64"));
`,
      { mode: 0o755 },
    );
    const calls = path.join(bin, "calls");
    fs.writeFileSync(
      path.join(bin, "pulumi"),
      `#!/usr/bin/env bash
{ printf '%s\\x1f' "$@"; if [[ " $* " == *" --secret "* ]]; then printf '\\x1d'; cat; fi; printf '\\x1e'; } >> ${calls}
`,
      { mode: 0o755 },
    );
    const script = renderScript(conversion, {
      source: sample,
      namespace: String(conversion.config.namespace),
    });
    const r = spawnSync("bash", ["-c", script], {
      encoding: "utf8",
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    });
    expect({ status: r.status, stderr: r.stderr, stdout: r.stdout }).toEqual({
      status: 0,
      stderr: "",
      stdout: "",
    });
    const records = fs
      .readFileSync(calls, "utf8")
      .split("\x1e")
      .filter(Boolean)
      .map((record) => {
        const [args, stdin] = record.split("\x1d");
        return { args: args.split("\x1f").slice(0, -1), stdin };
      });
    expect(records.some((c) => c.args.join(" ").includes("CANARY"))).toBe(false);
    const { config, secrets } = replay(records);
    expect(config).toEqual(conversion.config);
    expect(secrets).toEqual(
      Object.fromEntries(
        Object.keys(conversion.secrets).map((name) => [`pulp:${name}`, `CANARY-run-${name}`]),
      ),
    );
  },
);
