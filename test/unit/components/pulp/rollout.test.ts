// A pod template changes exactly when what its pods read changes: new settings always reach the pods
// (the seed's "config change never replicated"), and a change that does not concern a Deployment rolls
// nothing.
import { CONFIG_HASH_ANNOTATION } from "../../../../components/workload/workload";
import { MINIMAL } from "../../helpers/configs";
import { JOB, podTemplates, render } from "../../helpers/render";

const BASE = { ...MINIMAL, web: { enabled: true }, redis: { enabled: true } };

/** Which Deployments get a different pod template (and so roll) between two configs. */
async function rolled(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  secrets = {},
  secretsAfter = secrets,
) {
  const a = podTemplates(await render(before, secrets));
  const b = podTemplates(await render(after, secretsAfter));
  return Object.keys(a)
    .filter((name) => JSON.stringify(a[name]) !== JSON.stringify(b[name]))
    .sort();
}

test("rendering twice changes nothing", async () => {
  expect(await rolled(BASE, BASE)).toEqual([]);
});

test("a replicas change rolls nothing", async () => {
  expect(await rolled(BASE, { ...BASE, api: { replicas: 5 }, worker: { replicas: 4 } })).toEqual([]);
});

test("a settings change rolls exactly the Pulp processes", async () => {
  expect(await rolled(BASE, { ...BASE, contentOrigin: "https://other.example.com" })).toEqual([
    "pulp-api",
    "pulp-content",
    "pulp-worker",
  ]);
});

test("a Pulp upgrade rolls the Pulp processes, not Redis or pulp-web (they run images of their own)", async () => {
  expect(await rolled(BASE, { ...BASE, image: "quay.io/pulp/pulp-minimal:3.85.1" })).toEqual([
    "pulp-api",
    "pulp-content",
    "pulp-worker",
  ]);
});

test("an nginx change rolls only pulp-web", async () => {
  expect(await rolled(BASE, { ...BASE, web: { enabled: true, clientMaxBodySize: "20g" } })).toEqual([
    "pulp-web",
  ]);
});

test("a resources change rolls only that Deployment", async () => {
  expect(
    await rolled(BASE, { ...BASE, content: { resources: { requests: { cpu: "1", memory: "1Gi" } } } }),
  ).toEqual(["pulp-content"]);
});

test("a new external database password rolls the Pulp processes", async () => {
  const external = {
    contentOrigin: "https://pulp.example.com",
    database: { external: { host: "db.example.com" } },
  };
  expect(await rolled(external, external, { databasePassword: "one" }, { databasePassword: "two" })).toEqual([
    "pulp-api",
    "pulp-content",
    "pulp-worker",
  ]);
});

test("the config hash annotation is plain text, so previews show it", async () => {
  const run = await render(BASE);
  const templates = podTemplates(run) as Record<
    string,
    { metadata: { annotations: Record<string, unknown> } }
  >;
  for (const template of Object.values(templates)) {
    expect(template.metadata.annotations[CONFIG_HASH_ANNOTATION]).toMatch(/^[0-9a-f]{10}$/);
  }
});

test("a new image or new settings get a new migration Job; replicas do not", async () => {
  const jobName = async (raw: Record<string, unknown>) =>
    (await render(raw)).ofType(JOB)[0].inputs.metadata.name;
  const base = await jobName(BASE);
  expect(base).toMatch(/^pulp-migrate-[0-9a-f]{8}$/);
  expect(await jobName({ ...BASE, api: { replicas: 7 } })).toBe(base);
  expect(await jobName({ ...BASE, image: "quay.io/pulp/pulp-minimal:3.86.0" })).not.toBe(base);
  expect(await jobName({ ...BASE, contentOrigin: "https://other.example.com" })).not.toBe(base);
});

// Without it the provider awaits the same failed Job on every later `up`, and a fixed cause never
// migrates (pulumi-kubernetes #856); the real rolling-upgrade test runs the retry.
test("a failed migration Job is replaced by the next update, not awaited again", async () => {
  const [job] = (await render(BASE)).ofType(JOB);
  expect(job.inputs.metadata.annotations).toEqual({ "pulumi.com/replaceUnready": "true" });
});
