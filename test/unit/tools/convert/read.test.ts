// Unit test (no cluster: a stand-in kubectl answers from the sample CRs): how pulp-convert reads what it
// converts. From a file: several documents and List items, the CR by name or the only one, its namespace
// from -n when it has none, objects of other namespaces left out, and of a Secret only the config keys
// decoded. From the cluster: the CR, each Secret it names as key names plus the values of its config keys
// only (the go-template asks kubectl for no other value), the settings ConfigMap, PulpBackups and
// PulpRestores when their CRDs exist, and one line for what is missing.
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ToolError } from "../../../../tools/kube";
import { fromCluster, fromDocuments, keysTemplate, readDocuments } from "../../../../tools/convert/read";
import { load, sampleText } from "./samples";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "convert-read-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test("a file: the CR and what it names; of a Secret, its key names and the config keys' values only", () => {
  const input = load("example-2.0.0");
  expect(input.cr.metadata).toEqual({ name: "example", namespace: "pulp" });
  expect(input.secrets).toEqual({
    "example-admin": { keys: ["password"], values: {} },
    "example-secret-key": { keys: ["secret_key"], values: {} },
    "example-db-fields-encryption": { keys: ["database_fields.symmetric.key"], values: {} },
    "example-external-db": {
      keys: [
        "POSTGRES_DB_NAME",
        "POSTGRES_HOST",
        "POSTGRES_PASSWORD",
        "POSTGRES_PORT",
        "POSTGRES_SSLMODE",
        "POSTGRES_USERNAME",
      ],
      values: {
        POSTGRES_HOST: "example-pg.pulp.svc.cluster.local",
        POSTGRES_PORT: "5432",
        POSTGRES_DB_NAME: "pulp",
        POSTGRES_USERNAME: "pulp",
        POSTGRES_SSLMODE: "disable",
      },
    },
  });
  expect(input.configMaps).toEqual({ "example-settings": { orphan_protection_time: "1440" } });
  // The Secret of the same name in another namespace is not the CR's.
  expect(load("ingress-s3").secrets["alpha-db"].values.POSTGRES_HOST).toBe("db.example.com");
});

test("a file: List items are documents; several CRs need --name; -n fills in a missing namespace", () => {
  const list = JSON.stringify({
    kind: "List",
    items: [
      { apiVersion: "repo-manager.pulpproject.org/v1", kind: "Pulp", metadata: { name: "a" }, spec: {} },
      { apiVersion: "repo-manager.pulpproject.org/v1", kind: "Pulp", metadata: { name: "b" }, spec: {} },
      { apiVersion: "other.example.com/v1", kind: "Pulp", metadata: { name: "c" } },
    ],
  });
  const docs = readDocuments(list, "list.json");
  expect(() => fromDocuments(docs, "list.json")).toThrow(
    new ToolError("2 Pulp CRs in list.json (a, b): choose one with --name"),
  );
  expect(() => fromDocuments(docs, "list.json", "c")).toThrow(
    new ToolError("no Pulp CR c in list.json (there: a, b)"),
  );
  expect(fromDocuments(docs, "list.json", "b", "team-b").cr.metadata).toEqual({
    name: "b",
    namespace: "team-b",
  });
  expect(() =>
    fromDocuments(readDocuments(sampleText("nginx-ingress"), "f"), "f", undefined, "other"),
  ).toThrow(new ToolError("the Pulp CR pulp is in namespace pulp, not other (-n)"));
  expect(() => readDocuments("a: [", "bad.yaml")).toThrow(/^bad.yaml is not YAML: /);
  expect(() => fromDocuments([], "empty.yaml")).toThrow(
    new ToolError("no Pulp CR (kind Pulp, apiVersion repo-manager.pulpproject.org/v1) in empty.yaml"),
  );
});

test("the go-template prints every key name, and a value only for the config keys", () => {
  expect(keysTemplate([])).toBe('{{range $k, $v := .data}}{{$k}}{{"\\n"}}{{end}}');
  expect(keysTemplate(["POSTGRES_HOST", "a.b"])).toBe(
    '{{range $k, $v := .data}}{{$k}}{{if eq $k "POSTGRES_HOST" "a.b"}}={{$v}}{{end}}{{"\\n"}}{{end}}',
  );
});

/**
 * A kubectl that logs its arguments and answers from `state`: the Pulp list, each Secret as the
 * go-template would print it (values only for the keys the template names), ConfigMaps, and the
 * PulpBackup and PulpRestore lists (or no such resource type).
 */
function standIn(state: object): { kubectl: string; calls: () => string[][] } {
  fs.writeFileSync(path.join(dir, "state.json"), JSON.stringify(state));
  fs.rmSync(path.join(dir, "calls"), { force: true });
  const kubectl = path.join(dir, "kubectl");
  fs.writeFileSync(
    kubectl,
    `#!/usr/bin/env node
const fs = require("fs");
const args = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(path.join(dir, "calls"))}, JSON.stringify(args) + "\\n");
const state = JSON.parse(fs.readFileSync(${JSON.stringify(path.join(dir, "state.json"))}, "utf8"));
const [verb, kind, name] = args[0] === "--kubeconfig" ? args.slice(2) : args;
const notFound = (what) => { process.stderr.write('Error from server (NotFound): ' + what + ' "' + name + '" not found\\n'); process.exit(1); };
if (verb !== "get") process.exit(3);
if (kind === "pulps.repo-manager.pulpproject.org") {
  if (!state.pulps) { process.stderr.write('error: the server doesn\\'t have a resource type "pulps"\\n'); process.exit(1); }
  process.stdout.write(JSON.stringify({ items: state.pulps }));
} else if (kind === "secret") {
  const secret = state.secrets[name];
  if (!secret) notFound("secrets");
  const template = args.find((a) => a.startsWith("go-template="));
  const wanted = [...template.matchAll(/"([^"]+)"/g)].map((m) => m[1]).filter((k) => k !== "\\\\n");
  for (const key of Object.keys(secret).sort())
    process.stdout.write(key + (wanted.includes(key) ? "=" + secret[key] : "") + "\\n");
} else if (kind === "configmap") {
  if (!state.configMaps[name]) notFound("configmaps");
  process.stdout.write(JSON.stringify({ data: state.configMaps[name] }));
} else if (kind.startsWith("pulpbackups.") || kind.startsWith("pulprestores.")) {
  const list = state[kind.split(".")[0]];
  if (!list) { process.stderr.write('error: the server doesn\\'t have a resource type "' + kind + '"\\n'); process.exit(1); }
  process.stdout.write(JSON.stringify({ items: list }));
} else process.exit(3);
`,
    { mode: 0o755 },
  );
  const calls = () =>
    fs
      .readFileSync(path.join(dir, "calls"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
  return { kubectl, calls };
}

/** The example's objects as the API server holds them: Secret data base64. */
function clusterState() {
  const docs = readDocuments(sampleText("example-2.0.0"), "example");
  const secrets: Record<string, Record<string, string>> = {};
  for (const d of docs.filter((d) => d.kind === "Secret"))
    secrets[d.metadata!.name!] = d.data as Record<string, string>;
  const configMaps: Record<string, unknown> = {};
  for (const d of docs.filter((d) => d.kind === "ConfigMap")) configMaps[d.metadata!.name!] = d.data;
  return { pulps: docs.filter((d) => d.kind === "Pulp"), secrets, configMaps, pulprestores: [] as object[] };
}

test("the cluster: what a file gives, read with one call per object, no secret value asked for", () => {
  const { kubectl, calls } = standIn(clusterState());
  const input = fromCluster({ kubectl, kubeconfig: "/k/config" }, "pulp");
  const fromFile = load("example-2.0.0");
  expect(input.cr).toEqual(fromFile.cr);
  expect(input.secrets).toEqual(fromFile.secrets);
  expect(input.configMaps).toEqual(fromFile.configMaps);
  // No PulpBackup CRD: none; PulpRestores: an empty list.
  expect(input.backups).toEqual([]);
  expect(input.restores).toEqual([]);
  const template = (keys: string[]) => `go-template=${keysTemplate(keys)}`;
  const secret = (name: string, keys: string[] = []) => [
    "--kubeconfig",
    "/k/config",
    "get",
    "secret",
    name,
    "-n",
    "pulp",
    "-o",
    template(keys),
  ];
  expect(calls()).toEqual([
    ["--kubeconfig", "/k/config", "get", "pulps.repo-manager.pulpproject.org", "-n", "pulp", "-o", "json"],
    secret("example-admin"),
    secret("example-secret-key"),
    secret("example-db-fields-encryption"),
    secret("example-external-db", [
      "POSTGRES_HOST",
      "POSTGRES_PORT",
      "POSTGRES_DB_NAME",
      "POSTGRES_USERNAME",
      "POSTGRES_SSLMODE",
    ]),
    ["--kubeconfig", "/k/config", "get", "configmap", "example-settings", "-n", "pulp", "-o", "json"],
    [
      "--kubeconfig",
      "/k/config",
      "get",
      "pulpbackups.repo-manager.pulpproject.org",
      "-n",
      "pulp",
      "-o",
      "json",
    ],
    [
      "--kubeconfig",
      "/k/config",
      "get",
      "pulprestores.repo-manager.pulpproject.org",
      "-n",
      "pulp",
      "-o",
      "json",
    ],
  ]);
});

test("the cluster: what is missing is named in one line; no CRD, no CR, several CRs", () => {
  const state = clusterState();
  delete state.secrets["example-admin"];
  delete state.secrets["example-external-db"];
  expect(() => fromCluster({ kubectl: standIn(state).kubectl }, "pulp")).toThrow(
    new ToolError(
      "the Pulp CR example names what namespace pulp does not have: the Secret example-admin (admin_password_secret), " +
        "the Secret example-external-db (database.external_db_secret); the operator creates its Secrets on its first " +
        "reconcile: convert a CR it has reconciled",
    ),
  );
  expect(() => fromCluster({ kubectl: standIn({}).kubectl }, "pulp")).toThrow(
    new ToolError(
      "no Pulp CRD (pulps.repo-manager.pulpproject.org) in this cluster: pulp-operator is not installed here",
    ),
  );
  expect(() => fromCluster({ kubectl: standIn({ pulps: [] }).kubectl }, "pulp")).toThrow(
    new ToolError("no Pulp CR (kind Pulp, apiVersion repo-manager.pulpproject.org/v1) in namespace pulp"),
  );
  const two = clusterState();
  two.pulps.push({ ...two.pulps[0], metadata: { name: "second", namespace: "pulp" } });
  expect(() => fromCluster({ kubectl: standIn(two).kubectl }, "pulp")).toThrow(
    new ToolError("2 Pulp CRs in namespace pulp (example, second): choose one with --name"),
  );
  expect(fromCluster({ kubectl: standIn(two).kubectl }, "pulp", "example").cr.metadata?.name).toBe("example");
});
