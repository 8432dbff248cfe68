// Unit (the whole install under Pulumi mocks): a changed pulp:adminPassword reaches Pulp. The migration Job
// ends by setting the admin password (migrate.py), and a set pulp:adminPassword is part of its name as an
// HMAC keyed by SECRET_KEY: a new value runs the Job again, and nothing else changes. A real `up` with a new
// password is for the e2e proofs (pulp.test.ts).
import { loadConfig } from "../../../../components/config/load";
import { Pulp } from "../../../../components/pulp";
import { FIRST_INSTALL } from "../../../../components/upgrade/deployed";
import { MINIMAL } from "../../helpers/configs";
import { runWithMocks } from "../../helpers/pulumiMocks";

const SECRET_KEY = "an-install-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz";

async function install(adminPassword?: string, secretKey = SECRET_KEY) {
  const config: Record<string, unknown> = {};
  const given = { ...MINIMAL, secretKey, ...(adminPassword ? { adminPassword } : {}) };
  for (const [k, v] of Object.entries(given)) {
    config[`pulp:${k}`] = v;
  }
  const secretKeys = ["pulp:secretKey", ...(adminPassword ? ["pulp:adminPassword"] : [])];
  const run = await runWithMocks({ config, secretKeys }, () => {
    const loaded = loadConfig();
    new Pulp(loaded.config.instanceName, { ...loaded, deployed: FIRST_INSTALL, cluster: {} });
  });
  const jobs = run.ofType("kubernetes:batch/v1:Job").map((j) => j.inputs.metadata.name as string);
  const migrate = run.get("kubernetes:batch/v1:Job", "pulp-migrate");
  return {
    jobs,
    name: migrate.inputs.metadata.name as string,
    command: (migrate.inputs.spec.template.spec.containers[0].command as string[]).join(" "),
    deployments: run
      .ofType("kubernetes:apps/v1:Deployment")
      .map((d) => JSON.stringify(d.inputs.spec.template))
      .sort(),
  };
}

test("a new pulp:adminPassword names a new migration Job, which sets it; the Deployments stay as they were", async () => {
  const a = await install("first-Passw0rd");
  const b = await install("second-Passw0rd");
  const again = await install("first-Passw0rd");
  expect(b.name).not.toBe(a.name);
  expect(again.name).toBe(a.name);
  expect(a.name).toMatch(/^pulp-migrate-[0-9a-f]{8}$/);
  expect(b.deployments).toEqual(a.deployments);
  expect(a.command).toContain('call_command("reset-admin-password", password=password)');
  expect(a.command).not.toContain("first-Passw0rd");
});

test("the password's part of the name is keyed by SECRET_KEY: the same password elsewhere names another Job", async () => {
  const here = await install("first-Passw0rd");
  const elsewhere = await install("first-Passw0rd", `${SECRET_KEY}-another-install`);
  const generatedHere = await install();
  const generatedElsewhere = await install(undefined, `${SECRET_KEY}-another-install`);
  // Only the password's HMAC differs between the first two; SECRET_KEY's Secret name is the same.
  expect(elsewhere.name).not.toBe(here.name);
  expect(generatedElsewhere.name).toBe(generatedHere.name);
});

test("the generated password never renames the Job, and no Job of its own resets it", async () => {
  const first = await install();
  const second = await install();
  expect(second.name).toBe(first.name);
  expect(first.jobs.filter((j) => j.includes("reset-admin-password"))).toEqual([]);
  expect(first.jobs).toEqual([first.name]);
});
