// unit: the production example renders under Pulumi mocks. examples/production/Pulumi.production.yaml is
// read as a user's stack file would be (its `pulp:` keys, with the secrets its header comment says to set),
// parsed by the program's own parseConfig (strict objects: a key the schema renamed or dropped fails here),
// and rendered whole; the checks are the promises its comments make.
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import * as pulumi from "@pulumi/pulumi";
import { parseImage } from "../../../components/config/formats";
import { parseConfig } from "../../../components/config/parse";
import { ConfigError } from "../../../components/config/problems";
import { SECRET_NAMES, SecretName } from "../../../components/config/rules";
import { tagOnlyWarning } from "../../../components/upgrade/pinning";
import { REPO, rawOf } from "../helpers/configs";
import { MockRun } from "../helpers/pulumiMocks";
import { CNPG, CRONJOB, DEPLOYMENT, JOB, PVC, SECRET, podSpecs, render } from "../helpers/render";

const FILE = path.join(REPO, "examples/production/Pulumi.production.yaml");
const INGRESS = "kubernetes:networking.k8s.io/v1:Ingress";
const PDB = "kubernetes:policy/v1:PodDisruptionBudget";

const text = fs.readFileSync(FILE, "utf8");
const doc = yaml.load(text) as { config: Record<string, unknown> };
const raw = rawOf(doc.config);

/** The secrets the header comment tells the user to set, one `pulumi config set --secret` line each. */
const listedSecrets = [...text.matchAll(/^#\s+pulumi config set --secret pulp:(\w+)\s*$/gm)].map((m) => m[1]);
/** A valid test value per secret (the program checks their format: strength.ts, rules.ts). */
const TEST_VALUES: Record<SecretName, string> = {
  adminPassword: "example-Admin-pw1",
  secretKey: "example-secret-key-0123456789abcdefghijklmnopqrstuvwxyz",
  dbFieldsEncryptionKey: "Vq3rcn1qCbSWc2tW3rOUbDGMnKcAUOsqDnG8K2ZsbcE=",
  databasePassword: "example-database-password",
  s3SecretAccessKey: "example-s3-secret",
  azureAccountKey: "ZXhhbXBsZS1henVyZS1hY2NvdW50LWtleS1leGFtcGxlLWF6dXJlLWFjY291bnQta2V5LWV4YW1wbGUtYXp1cg==",
  gcsCredentials: JSON.stringify({
    type: "service_account",
    client_email: "pulp@example-project.iam.gserviceaccount.com",
    private_key: "-----BEGIN PRIVATE KEY-----\nexample\n-----END PRIVATE KEY-----\n",
    token_uri: "https://oauth2.googleapis.com/token",
  }),
  backupS3SecretAccessKey: "example-backup-s3-secret",
  restoreS3SecretAccessKey: "example-restore-s3-secret",
  signingKey: "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nexample\n-----END PGP PRIVATE KEY BLOCK-----",
  ldapBindPassword: "example-ldap-bind-password",
};
const secrets = Object.fromEntries(listedSecrets.map((name) => [name, TEST_VALUES[name as SecretName]]));

const HOST = "pulp.example.com";
const SCHEDULE = "0 3 * * *";

let run: MockRun;
const warnings: string[] = [];

beforeAll(async () => {
  const warn = jest.spyOn(pulumi.log, "warn").mockImplementation(async (message: string) => {
    warnings.push(message);
  });
  try {
    run = await render(raw, secrets);
  } finally {
    warn.mockRestore();
  }
});

test("every key is in the pulp: namespace and no secret is in the file", () => {
  expect(Object.keys(doc.config).filter((k) => !k.startsWith("pulp:"))).toEqual([]);
  expect(Object.keys(raw).filter((k) => (SECRET_NAMES as readonly string[]).includes(k))).toEqual([]);
  // A `secure:` value is encrypted for one stack's key: in a file meant to be copied it cannot be read.
  const secure = (v: unknown): boolean =>
    typeof v === "object" && v !== null && ("secure" in v || Object.values(v).some(secure));
  expect(Object.keys(doc.config).filter((k) => secure(doc.config[k]))).toEqual([]);
});

test("the header lists the secrets to set, each one the program reads", () => {
  expect(listedSecrets.sort()).toEqual(["backupS3SecretAccessKey"]);
  for (const name of listedSecrets) expect(SECRET_NAMES as readonly string[]).toContain(name);
});

test("the README's and docs/install.md's install steps set exactly those secrets", () => {
  // A secret set that the example does not use is refused (an S3 secret without its key, for one).
  for (const doc of ["README.md", "docs/install.md"]) {
    const steps = fs.readFileSync(path.join(REPO, doc), "utf8");
    const block = /```sh\n(pulumi stack init production[\s\S]*?)```/.exec(steps)?.[1];
    expect({ doc, found: block !== undefined }).toEqual({ doc, found: true });
    const set = [...block!.matchAll(/pulumi config set --secret pulp:(\w+)/g)].map((m) => m[1]).sort();
    expect({ doc, set }).toEqual({ doc, set: [...listedSecrets].sort() });
  }
});

test("parseConfig accepts the example with those secrets and reports no problem", () => {
  const supplied = new Set(listedSecrets as SecretName[]);
  let problems: string[] = [];
  try {
    parseConfig(raw, supplied, secrets, new Set());
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    problems = e.problems.map((p) => `${p.key}: ${p.message}`);
  }
  expect(problems).toEqual([]);
});

test("the commented AKS alternative, put in place of the S3 storage and identity, runs keyless as a workload identity", async () => {
  const lines = text.split("\n");
  const start = lines.indexOf("  # pulp:storage:");
  const block = lines
    .slice(start)
    .filter((_, i, rest) =>
      rest.slice(0, i + 1).every((l) => l.startsWith("  # ") && !l.startsWith("  # On ")),
    );
  const aks = yaml.load(block.map((l) => l.slice("  # ".length)).join("\n")) as Record<string, unknown>;
  expect(Object.keys(aks)).toEqual(["pulp:storage", "pulp:serviceAccount"]);
  const run = await render(
    { ...raw, storage: aks["pulp:storage"], serviceAccount: aks["pulp:serviceAccount"] },
    Object.fromEntries(Object.entries(secrets).filter(([name]) => name !== "s3SecretAccessKey")),
  );
  const settings = run.ofType(SECRET).find((r) => /^pulp-settings-/.test(r.inputs.metadata.name))!;
  expect(settings.inputs.stringData["settings.py"]).toContain(
    '"token_credential": _PulpAzureWorkloadIdentity()',
  );
  const api = run.ofType(DEPLOYMENT).find((d) => d.inputs.metadata.name === "pulp-api")!;
  expect(api.inputs.spec.template.spec.serviceAccountName).toBe("pulp-pulp");
  expect(api.inputs.spec.template.metadata.labels["azure.workload.identity/use"]).toBe("true");
});

test("the commented GKE alternative, put in place of the S3 storage and identity, runs keyless as Workload Identity", async () => {
  const lines = text.split("\n");
  const start = lines.indexOf("  # pulp:storage:", lines.indexOf("  # pulp:storage:") + 1);
  const block = lines
    .slice(start)
    .filter((_, i, rest) => rest.slice(0, i + 1).every((l) => l.startsWith("  # ")));
  const gke = yaml.load(block.map((l) => l.slice("  # ".length)).join("\n")) as Record<string, unknown>;
  expect(Object.keys(gke)).toEqual(["pulp:storage", "pulp:serviceAccount"]);
  const run = await render(
    { ...raw, storage: gke["pulp:storage"], serviceAccount: gke["pulp:serviceAccount"] },
    Object.fromEntries(Object.entries(secrets).filter(([name]) => name !== "s3SecretAccessKey")),
  );
  const settings = run.ofType(SECRET).find((r) => /^pulp-settings-/.test(r.inputs.metadata.name))!;
  expect(settings.inputs.stringData["settings.py"]).toContain('"iam_sign_blob": True');
  const api = run.ofType(DEPLOYMENT).find((d) => d.inputs.metadata.name === "pulp-api")!;
  expect(api.inputs.spec.template.spec.serviceAccountName).toBe("pulp-pulp");
});

test("the commented Route, put in place of className, serves pulp-tls through OpenShift's router", async () => {
  const line = text.split("\n").find((l) => /^ {2}# {3}kind: Route$/.test(l))!;
  const routed: Record<string, unknown> = {
    ...(raw.ingress as object),
    ...(yaml.load(line.replace(/^ {2}# {3}/, "")) as object),
  };
  delete routed.className;
  const routes = (await render({ ...raw, ingress: routed }, secrets)).ofType(
    "kubernetes:route.openshift.io/v1:Route",
  );
  expect(routes.length).toBeGreaterThan(0);
  for (const route of routes) {
    expect(route.inputs.spec.host).toBe(HOST);
    expect(route.inputs.spec.tls.externalCertificate).toEqual({ name: "pulp-tls" });
  }
});

test("the commented pooler, put in place, puts Pulp behind a Pooler of two instances", async () => {
  const line = text.split("\n").find((l) => /^ {6}# pooler: /.test(l))!;
  const database = raw.database as { cloudnativepg: Record<string, unknown> };
  const pooled = {
    ...raw,
    database: {
      cloudnativepg: { ...database.cloudnativepg, ...(yaml.load(line.replace(/^ {6}# /, "")) as object) },
    },
  };
  const poolers = (await render(pooled, secrets)).ofType("kubernetes:postgresql.cnpg.io/v1:Pooler");
  expect(poolers.map((p) => [p.inputs.metadata.name, p.inputs.spec.instances])).toEqual([
    ["pulp-db-pooler", 2],
  ]);
});

test("a key the schema does not know is refused (the example cannot drift silently)", () => {
  const api = raw.api as Record<string, unknown>;
  const drifted = { ...raw, api: { ...api, replica: api.replicas } };
  expect(() => parseConfig(drifted, new Set(listedSecrets as SecretName[]), secrets)).toThrow(ConfigError);
});

test("the Pulp images are pinned by digest, so preview prints no tag-only warning", () => {
  const images = [raw.image as string, (raw.web as { image: string }).image];
  for (const image of images) {
    expect(parseImage(image)).toMatchObject({ tag: "3.123.1", digest: expect.stringMatching(/^sha256:/) });
  }
  expect(tagOnlyWarning(raw.image as string)).toBeUndefined();
  expect(warnings.filter((w) => /pinned by tag only/.test(w))).toEqual([]);
  // The header says how to replace each placeholder digest.
  for (const image of images) {
    const tagged = image.split("@")[0];
    expect(text).toContain(`skopeo inspect --format '{{.Digest}}' docker://${tagged}`);
  }
});

test("every container of every Pulp pod runs an image pinned by digest", () => {
  const specs = podSpecs(run);
  const names = specs.map(([name]) => name);
  for (const name of ["api", "content", "worker", "web"]) {
    expect(names).toContain(`Deployment pulp-${name}`);
  }
  expect(names.some((n) => /^Job pulp-migrate-/.test(n))).toBe(true);
  const unpinned: string[] = [];
  for (const [name, spec] of specs) {
    const containers = [
      ...((spec.initContainers as { name: string; image: string }[] | undefined) ?? []),
      ...(spec.containers as { name: string; image: string }[]),
    ];
    for (const c of containers) {
      if (!parseImage(c.image)?.digest) unpinned.push(`${name} ${c.name}: ${c.image}`);
    }
  }
  expect(unpinned).toEqual([]);
});

test("three CloudNativePG instances", () => {
  const clusters = run.ofType(CNPG);
  expect(clusters).toHaveLength(1);
  expect(clusters[0].inputs.spec.instances).toBe(3);
});

test("an Ingress serves the host over TLS", () => {
  const ingresses = run.ofType(INGRESS);
  expect(ingresses).toHaveLength(1);
  const spec = ingresses[0].inputs.spec;
  expect(spec.rules.map((r: { host: string }) => r.host)).toEqual([HOST]);
  expect(spec.tls).toEqual([{ hosts: [HOST], secretName: "pulp-tls" }]);
  expect(raw.contentOrigin).toBe(`https://${HOST}`);
});

test("artifacts live in S3, reached through an IAM role: no artifact volume, no key, Pulp's STORAGES names the bucket", () => {
  const claims = run.ofType(PVC).map((r) => r.inputs.metadata.name as string);
  expect(claims).not.toContain("pulp-artifacts");
  expect(claims).toEqual(["pulp-backups"]);
  const settings = run
    .ofType(SECRET)
    .filter((s) => String(s.inputs.metadata.name).startsWith("pulp-settings-"));
  expect(settings).toHaveLength(1);
  const py = settings[0].inputs.stringData["settings.py"] as string;
  expect(py).toContain("storages.backends.s3.S3Storage");
  expect(py).toContain((raw.storage as { s3: { bucket: string } }).s3.bucket);
  // No key: the pods' IAM role (EKS IRSA) reaches the bucket.
  expect(py).not.toContain("access_key");
  const [account] = run.ofType("kubernetes:core/v1:ServiceAccount");
  expect(account.inputs.metadata.annotations["eks.amazonaws.com/role-arn"]).toMatch(/^arn:aws:iam::/);
  for (const d of run
    .ofType(DEPLOYMENT)
    .filter((d) => /^pulp-(api|content|worker)$/.test(d.inputs.metadata.name)))
    expect(d.inputs.spec.template.spec.serviceAccountName).toBe("pulp-pulp");
});

test("backups run on the schedule and go to the backup bucket", () => {
  const cronJobs = run.ofType(CRONJOB);
  expect(cronJobs).toHaveLength(1);
  expect(cronJobs[0].inputs.spec.schedule).toBe(SCHEDULE);
  expect(cronJobs[0].inputs.spec.suspend ?? false).toBe(false);
  expect(JSON.stringify(cronJobs[0].inputs.spec.jobTemplate)).toContain("example-pulp-backups");
});

test("api and content run at least two replicas, each with a disruption budget", () => {
  const deployments = Object.fromEntries(run.ofType(DEPLOYMENT).map((d) => [d.inputs.metadata.name, d]));
  const budgets = run.ofType(PDB).map((p) => p.inputs.metadata.name);
  for (const name of ["pulp-api", "pulp-content"]) {
    expect(deployments[name].inputs.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(budgets).toContain(name);
  }
  expect(run.ofType(JOB).length).toBeGreaterThan(0);
});
