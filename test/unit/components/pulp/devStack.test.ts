// The dev stack as committed, through index.ts: a complete install, its outputs, and a snapshot of every
// resource it renders (review snapshot diffs like code).
import * as pulumi from "@pulumi/pulumi";
import { stackConfig } from "../../helpers/configs";
import { promiseOf, runWithMocks, MockRun } from "../../helpers/pulumiMocks";

let run: MockRun;
let program: Record<string, unknown>;

beforeAll(async () => {
  run = await runWithMocks({ config: stackConfig("dev"), stack: "dev" }, async () => {
    const mod = (await import("../../../../index")) as any;
    const main = (mod.default ?? mod) as () => Promise<Record<string, unknown>>; // index.ts: `export = async () => ...`
    program = await main();
  });
});

test("the dev stack renders a complete install", () => {
  const kinds = run.resources
    .filter((r) => r.custom)
    .map((r) => `${r.type.split(":").slice(1).join(":")} ${r.inputs.metadata?.name ?? r.name}`);
  expect(kinds).toEqual(
    expect.arrayContaining([
      "core/v1:Namespace pulp-dev",
      // The program's default database: a CloudNativePG Cluster (the real operator on the real node).
      "postgresql.cnpg.io/v1:Cluster pulp-db",
      "core/v1:PersistentVolumeClaim pulp-artifacts",
      "core/v1:Secret pulp-secret-key",
      "core/v1:Secret pulp-db-fields-encryption",
      "core/v1:Secret pulp-admin-password",
      "apps/v1:Deployment pulp-api",
      "apps/v1:Deployment pulp-content",
      "apps/v1:Deployment pulp-worker",
      "apps/v1:Deployment pulp-web",
      "apps/v1:Deployment pulp-redis",
      "core/v1:Service pulp-api",
      "core/v1:Service pulp-content",
      "core/v1:Service pulp-web",
      "core/v1:Service pulp-redis",
      "policy/v1:PodDisruptionBudget pulp-api",
    ]),
  );
  // The migration Job, which also sets the admin password.
  expect(run.ofType("kubernetes:batch/v1:Job").map((j) => j.inputs.metadata.name)).toEqual([
    expect.stringMatching(/^pulp-migrate-[0-9a-f]{8}$/),
  ]);
  expect(
    run.resources.filter(
      (r) =>
        r.type.startsWith("kubernetes:core/v1:Secret") && r.inputs.metadata.name.startsWith("pulp-settings-"),
    ),
  ).toHaveLength(1);
});

test("the stack outputs name what a person needs", async () => {
  expect(program.apiUrl).toBe("http://127.0.0.1:8080/pulp/api/v3/");
  expect(program.contentUrl).toBe("http://127.0.0.1:8080/pulp/content/");
  expect(await promiseOf(program.namespace as pulumi.Output<string>)).toBe("pulp-dev");
  expect(program.serviceNames).toEqual({
    api: "pulp-api",
    content: "pulp-content",
    web: "pulp-web",
    redis: "pulp-redis",
  });
  expect(program.secretNames).toMatchObject({
    secretKey: "pulp-secret-key",
    dbFieldsEncryption: "pulp-db-fields-encryption",
    adminPassword: "pulp-admin-password",
    databasePassword: "pulp-db-app",
  });
  expect(await promiseOf(program.migrationJob as pulumi.Output<string>)).toMatch(
    /^pulp-migrate-[0-9a-f]{8}$/,
  );
  expect(await promiseOf(program.pulpcoreVersion as pulumi.Output<string>)).toBe("3.123.1");
});

test("snapshot of every resource the dev stack renders", () => {
  const mask = (value: unknown): unknown =>
    typeof value === "string" && value.startsWith("generated-")
      ? "<generated>"
      : typeof value === "string" && /^uid-[0-9a-z]+$/.test(value) // the mocks' random object uids
        ? "<uid>"
        : Array.isArray(value)
          ? value.map(mask)
          : value && typeof value === "object"
            ? Object.fromEntries(
                Object.entries(value)
                  .filter(([k]) => k !== "__provider")
                  .map(([k, v]) => [k, mask(v)]),
              )
            : value;
  const rendered = run.resources
    .map((r) => ({
      type: r.type,
      name: r.name,
      protect: r.protect,
      retainOnDelete: r.retainOnDelete,
      inputs: mask(r.inputs),
    }))
    .sort((a, b) => `${a.type} ${a.name}`.localeCompare(`${b.type} ${b.name}`));
  expect(rendered).toMatchSnapshot();
});
