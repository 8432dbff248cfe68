// Unit, under Pulumi mocks: CloudNativePG's Pooler in front of the primary (database.cloudnativepg.pooler).
// Pulp's processes and the migration Job connect to the pooler's Service, by a name the server certificate
// then carries; backups, restores and the task-queue scaler keep going to the primary; PgBouncer runs in
// session mode with the program's settings under the user's; settings CloudNativePG would refuse are
// refused before anything is created, and those that would cut Pulp's sessions are warned about. (On real
// Pulp: test/e2e/real/pooler.test.ts.)
import * as pulumi from "@pulumi/pulumi";
import { parseConfig } from "../../../../components/config/parse";
import { ConfigError } from "../../../../components/config/problems";
import { POOLER_PARAMETERS, poolerWarning } from "../../../../components/database/pooler";
import { MINIMAL } from "../../helpers/configs";
import { CNPG, CRONJOB, JOB, render, SECRET } from "../../helpers/render";

const POOLER = "kubernetes:postgresql.cnpg.io/v1:Pooler";
const POOLED = {
  ...MINIMAL,
  namespace: "pulp-prod",
  database: {
    cloudnativepg: {
      imageName: "ghcr.io/cloudnative-pg/postgresql:17.6",
      pooler: {
        imageName: "mirror.example.com/cloudnative-pg/pgbouncer:1.24.1",
        parameters: { max_client_conn: 2000 },
      },
    },
  },
  backup: { enabled: true },
  worker: { autoscaling: { maxReplicas: 4 } },
};

function refusal(pooler: Record<string, unknown>): string {
  try {
    parseConfig({ ...MINIMAL, database: { cloudnativepg: { pooler } } }, new Set());
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  throw new Error("accepted");
}

const env = (container: { env?: { name: string; value?: string }[] }) =>
  Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));

test("a Pooler in session mode in front of the primary, with the program's PgBouncer settings under the user's", async () => {
  const run = await render(POOLED);
  const [pooler] = run.ofType(POOLER);
  expect(pooler.inputs.metadata).toMatchObject({ name: "pulp-db-pooler", namespace: "pulp-prod" });
  expect(pooler.inputs.spec).toEqual({
    cluster: { name: "pulp-db" },
    instances: 2,
    type: "rw",
    pgbouncer: {
      poolMode: "session",
      parameters: { max_client_conn: "2000", default_pool_size: "1000", server_login_retry: "1" },
    },
    template: {
      spec: {
        containers: [
          {
            name: "pgbouncer",
            image: "mirror.example.com/cloudnative-pg/pgbouncer:1.24.1",
            resources: { requests: { cpu: "50m", memory: "32Mi" }, limits: { memory: "256Mi" } },
          },
        ],
      },
    },
  });
  // Holds no data, so it is not protected like the Cluster.
  expect(pooler.protect).toBe(false);
  expect(run.ofType(CNPG)[0].protect).toBe(true);
});

test("the server certificate carries every name of the pooler's Service, so Pulp verifies it by name", async () => {
  const run = await render(POOLED);
  const [cluster] = run.ofType(CNPG);
  expect(cluster.inputs.spec.certificates).toEqual({
    serverAltDNSNames: [
      "pulp-db-pooler",
      "pulp-db-pooler.pulp-prod",
      "pulp-db-pooler.pulp-prod.svc",
      "pulp-db-pooler.pulp-prod.svc.cluster.local",
    ],
  });
  const [settings] = run
    .ofType(SECRET)
    .filter((s) => String(s.inputs.metadata.name).startsWith("pulp-settings-"));
  const text = settings.inputs.stringData["settings.py"];
  expect(text).toContain('"HOST": "pulp-db-pooler"');
  expect(text).toContain('"sslmode": "verify-full"');
});

test("backups, restores and the task-queue scaler go to the primary, not through the pooler", async () => {
  const run = await render(POOLED);
  const backup = run.k8s("CronJob", "pulp-backup").inputs.spec.jobTemplate.spec.template.spec;
  const dump = [...(backup.initContainers ?? []), ...backup.containers].find((c: any) => c.name === "backup");
  expect(env(dump)).toMatchObject({ PGHOST: "pulp-db-rw", PGSSLMODE: "verify-full" });
  expect(run.ofType(CRONJOB)).toHaveLength(1);
  const scaler = run.resources.filter((r) => r.type.startsWith("kubernetes:keda.sh/"));
  expect(scaler.length).toBeGreaterThan(0);
  const hosts = JSON.stringify(scaler.map((r) => r.inputs)).match(/pulp-db-(rw|pooler)\b/g) ?? [];
  expect(new Set(hosts)).toEqual(new Set(["pulp-db-rw"]));
  // The migration Job reads settings.py: it goes through the pooler with Pulp's processes.
  expect(
    run
      .ofType(JOB)
      .map((j) => j.inputs.metadata.name)
      .some((n: string) => n.startsWith("pulp-migrate")),
  ).toBe(true);
});

test("without a pooler: no Pooler, and the Cluster keeps the spec it had (no certificates block)", async () => {
  const run = await render(MINIMAL);
  expect(run.ofType(POOLER)).toEqual([]);
  const [cluster] = run.ofType(CNPG);
  expect(cluster.inputs.spec).not.toHaveProperty("certificates");
});

test("a setting CloudNativePG's Pooler does not accept, or pool_mode, is refused with the key and the command that removes it", () => {
  const message = refusal({ parameters: { listen_port: "6432", max_client_conn: "500" } });
  expect(message).toContain("pulp:database.cloudnativepg.pooler.parameters");
  expect(message).toContain("listen_port");
  expect(message).toMatch(/a PgBouncer setting that CloudNativePG's Pooler accepts/);
  expect(refusal({ parameters: { pool_mode: "transaction" } })).toMatch(
    /must be left out: the program keeps the pool mode at session/,
  );
  for (const name of POOLER_PARAMETERS) {
    expect(() =>
      parseConfig(
        { ...MINIMAL, database: { cloudnativepg: { pooler: { parameters: { [name]: "1" } } } } },
        new Set(),
      ),
    ).not.toThrow();
  }
});

test("settings that can cut Pulp's sessions are warned about, naming each key; zero, unset and DISCARD ALL are not", async () => {
  expect(poolerWarning({})).toBeUndefined();
  expect(poolerWarning({ query_timeout: "0", server_reset_query: "DISCARD ALL;" })).toBeUndefined();
  const both = poolerWarning({
    query_timeout: "30",
    client_idle_timeout: "600",
    server_reset_query: "RESET ALL",
  });
  expect(both).toContain(
    "pulp:database.cloudnativepg.pooler.parameters.query_timeout and pulp:database.cloudnativepg.pooler.parameters.client_idle_timeout can end a session of Pulp's",
  );
  expect(both).toContain(
    "pulp:database.cloudnativepg.pooler.parameters.server_reset_query is not DISCARD ALL",
  );

  const warnings: string[] = [];
  const warn = jest.spyOn(pulumi.log, "warn").mockImplementation(async (message: string) => {
    warnings.push(message);
  });
  try {
    await render({
      ...MINIMAL,
      database: { cloudnativepg: { pooler: { parameters: { query_timeout: 60 } } } },
    });
  } finally {
    warn.mockRestore();
  }
  expect(warnings.filter((w) => w.includes("query_timeout"))).toHaveLength(1);
});

test("the pooler's pods are placed as the database's are, and pull with the install's pull secrets", async () => {
  const run = await render({
    ...MINIMAL,
    database: { cloudnativepg: { pooler: {} } },
    scheduling: {
      nodeSelector: { "node-role.example.com/db": "true" },
      tolerations: [{ key: "dedicated", operator: "Equal", value: "db", effect: "NoSchedule" }],
    },
    imagePullSecrets: ["mirror-pull"],
  });
  const [pooler] = run.ofType(POOLER);
  const [cluster] = run.ofType(CNPG);
  const spec = pooler.inputs.spec.template.spec;
  expect(spec.nodeSelector).toEqual(cluster.inputs.spec.affinity.nodeSelector);
  expect(spec.tolerations).toEqual(cluster.inputs.spec.affinity.tolerations);
  expect(spec.nodeSelector).toEqual({ "node-role.example.com/db": "true" });
  expect(spec.imagePullSecrets).toEqual([{ name: "mirror-pull" }]);
  // No image named: the operator's default PgBouncer image.
  expect(spec.containers[0]).not.toHaveProperty("image");
});
