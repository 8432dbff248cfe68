// Unit, under Pulumi mocks: PostgreSQL settings for the CloudNativePG cluster (database.cloudnativepg.parameters).
// They reach the Cluster as strings, only when set; the ones the operator sets itself are refused before
// anything is created, naming the key and the command that removes it; server-wide timeouts that would
// cancel Pulp's own long statements are warned about. (On real Pulp: test/e2e/real/pulp.test.ts reads them
// back through Pulp's own database connection.)
import * as pulumi from "@pulumi/pulumi";
import { parseConfig } from "../../../../components/config/parse";
import { ConfigError } from "../../../../components/config/problems";
import { OPERATOR_PARAMETERS, parameterWarning } from "../../../../components/database/parameters";
import { MINIMAL } from "../../helpers/configs";
import { render } from "../../helpers/render";

const CLUSTER = "kubernetes:postgresql.cnpg.io/v1:Cluster";

function refusal(parameters: Record<string, unknown>): string {
  try {
    parseConfig({ ...MINIMAL, database: { cloudnativepg: { parameters } } }, new Set());
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  throw new Error("accepted");
}

test("set: every value reaches spec.postgresql.parameters as a string (numbers and booleans as YAML gives them)", async () => {
  const run = await render({
    ...MINIMAL,
    database: {
      cloudnativepg: {
        parameters: { max_connections: 200, work_mem: "16MB", "pg_stat_statements.max": "5000", jit: false },
      },
    },
  });
  const [cluster] = run.ofType(CLUSTER);
  expect(cluster.inputs.spec.postgresql).toEqual({
    parameters: { max_connections: "200", work_mem: "16MB", "pg_stat_statements.max": "5000", jit: "false" },
  });
});

test("unset: the Cluster has no postgresql block, so an install from before keeps the spec it had", async () => {
  const run = await render(MINIMAL);
  const [cluster] = run.ofType(CLUSTER);
  expect(cluster.inputs.spec).not.toHaveProperty("postgresql");
});

test("a setting the operator sets itself is refused, with the command that removes it", () => {
  const message = refusal({ ssl: "off", max_connections: "200" });
  expect(message).toContain("pulp:database.cloudnativepg.parameters.ssl");
  expect(message).toContain("is set by CloudNativePG itself");
  expect(message).toContain("pulumi config rm --path 'pulp:database.cloudnativepg.parameters.ssl'");
  expect(message).not.toContain("max_connections");
  // A dotted name is written as the CLI's --path needs it.
  expect(refusal({ "pg_failover_slots.primary_dsn": "host=x" })).toContain(
    `pulumi config rm --path 'pulp:database.cloudnativepg.parameters["pg_failover_slots.primary_dsn"]'`,
  );
  // Each of the operator's own is refused, not only the first.
  for (const name of OPERATOR_PARAMETERS) expect(refusal({ [name]: "x" })).toContain(name);
});

test("a name that is not a lower-case setting name is refused (`SSL` would pass the operator's own check)", () => {
  for (const name of ["SSL", "max connections", "work-mem", "a.b.c", ""]) {
    expect(refusal({ [name]: "on" })).toMatch(/a PostgreSQL setting's name in lower case/);
  }
});

test("server-wide timeouts are warned about, naming each key; zero or unset is not", async () => {
  expect(parameterWarning({ max_connections: "200" })).toBeUndefined();
  expect(parameterWarning({ statement_timeout: "0" })).toBeUndefined();
  expect(parameterWarning({ lock_timeout: "0ms" })).toBeUndefined();
  const both = parameterWarning({ statement_timeout: "30s", lock_timeout: "5s" });
  expect(both).toContain(
    "pulp:database.cloudnativepg.parameters.statement_timeout and pulp:database.cloudnativepg.parameters.lock_timeout apply to every session",
  );
  expect(both).toContain("ALTER ROLE <role> SET statement_timeout");

  const warnings: string[] = [];
  const warn = jest.spyOn(pulumi.log, "warn").mockImplementation(async (message: string) => {
    warnings.push(message);
  });
  try {
    await render({ ...MINIMAL, database: { cloudnativepg: { parameters: { statement_timeout: "60s" } } } });
  } finally {
    warn.mockRestore();
  }
  expect(warnings.filter((w) => w.includes("statement_timeout"))).toHaveLength(1);
});
