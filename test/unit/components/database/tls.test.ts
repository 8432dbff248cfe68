// Unit, under Pulumi mocks: TLS to the database. With CloudNativePG, Pulp verifies the server against the
// operator's CA (sslmode verify-full), and so do the migration Job and the backup pod; an external
// database keeps the sslmode it is given. (On real Pulp: test/e2e/real/pulp.test.ts, the first test.)
import { MINIMAL } from "../../helpers/configs";
import { DEPLOYMENT, JOB, render, SECRET } from "../../helpers/render";

const CRONJOB = "kubernetes:batch/v1:CronJob";
const CA_VOLUME = {
  name: "database-ca",
  secret: { secretName: "pulp-db-ca", items: [{ key: "ca.crt", path: "ca.crt" }], defaultMode: 0o444 },
};
const CA_MOUNT = { name: "database-ca", mountPath: "/etc/pulp/database-ca", readOnly: true };

async function settingsPy(
  raw: Record<string, unknown>,
  secrets: Record<string, string> = {},
): Promise<string> {
  const run = await render(raw, secrets);
  const [settings] = run
    .ofType(SECRET)
    .filter((s) => String(s.inputs.metadata.name).startsWith("pulp-settings-"));
  return settings.inputs.stringData["settings.py"];
}

test("CloudNativePG: settings.py verifies the server's name and certificate against the operator's CA", async () => {
  const text = await settingsPy(MINIMAL);
  expect(text).toContain('"sslmode": "verify-full"');
  expect(text).toContain('"sslrootcert": "/etc/pulp/database-ca/ca.crt"');
  expect(text).toContain('"HOST": "pulp-db-rw"');
});

test("every pod that connects mounts only the CA's certificate, as a directory (a renewed one reaches it)", async () => {
  const run = await render({
    ...MINIMAL,
    database: { cloudnativepg: { imageName: "ghcr.io/cloudnative-pg/postgresql:16.4" } },
    backup: { enabled: true },
  });
  const pods = [
    ...run.ofType(DEPLOYMENT).map((d) => [d.inputs.metadata.name, d.inputs.spec.template.spec]),
    ...run.ofType(JOB).map((j) => [j.inputs.metadata.name, j.inputs.spec.template.spec]),
  ] as [string, any][];
  const pulpPods = pods.filter(([name]) => /^pulp-(api|content|worker|migrate)/.test(name));
  expect(pulpPods.map(([name]) => name.replace(/-[0-9a-f]{8}$/, "")).sort()).toEqual([
    "pulp-api",
    "pulp-content",
    "pulp-migrate",
    "pulp-worker",
  ]);
  for (const [, spec] of pulpPods) {
    expect(spec.volumes).toContainEqual(CA_VOLUME);
    expect(spec.containers[0].volumeMounts).toContainEqual(CA_MOUNT);
  }
  const backup = run.k8s("CronJob", "pulp-backup").inputs.spec.jobTemplate.spec.template.spec;
  expect(backup.volumes).toContainEqual(CA_VOLUME);
  const dump = [...(backup.initContainers ?? []), ...backup.containers].find((c: any) => c.name === "backup");
  expect(dump.volumeMounts).toContainEqual(CA_MOUNT);
  const env = Object.fromEntries(dump.env.map((e: any) => [e.name, e.value]));
  expect(env).toMatchObject({ PGSSLMODE: "verify-full", PGSSLROOTCERT: "/etc/pulp/database-ca/ca.crt" });
  expect(run.ofType(CRONJOB)).toHaveLength(1);
});

test("an external database keeps its sslmode, with no CA mounted", async () => {
  const external = { database: { external: { host: "db.example.com", sslmode: "require" } } };
  const text = await settingsPy({ ...MINIMAL, ...external }, { databasePassword: "s3cret-Passw0rd" });
  expect(text).toContain('"sslmode": "require"');
  expect(text).not.toContain("sslrootcert");
  const run = await render({ ...MINIMAL, ...external }, { databasePassword: "s3cret-Passw0rd" });
  for (const d of run.ofType(DEPLOYMENT)) {
    expect(d.inputs.spec.template.spec.volumes.map((v: any) => v.name)).not.toContain("database-ca");
  }
});
