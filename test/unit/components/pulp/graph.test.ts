// Order is what keeps an upgrade safe: nothing rolls before the migration Job, and the Job runs only
// once the database, the secrets, the settings and the storage exist.
import { MINIMAL } from "../../helpers/configs";
import { CNPG, DEPLOYMENT, JOB, PVC, render, SECRET } from "../../helpers/render";

test("every Deployment that runs Pulp code waits for the migration Job", async () => {
  const run = await render({ ...MINIMAL, web: { enabled: true }, redis: { enabled: true } });
  const [job] = run.ofType(JOB);
  const pulpDeployments = run.ofType(DEPLOYMENT).filter((d) => d.inputs.metadata.name !== "pulp-redis");
  expect(pulpDeployments.map((d) => d.inputs.metadata.name).sort()).toEqual([
    "pulp-api",
    "pulp-content",
    "pulp-web",
    "pulp-worker",
  ]);
  for (const deployment of pulpDeployments) {
    expect(run.dependenciesOf(deployment)).toContain(job.urn);
  }
});

test("the migration Job waits for the database, every secret, the settings and the artifact volume", async () => {
  const run = await render(MINIMAL);
  const [job] = run.ofType(JOB);
  const deps = run.dependenciesOf(job);
  expect(deps).toContain(run.ofType(CNPG)[0].urn);
  expect(deps).toContain(run.ofType(PVC)[0].urn);
  for (const secret of run.ofType(SECRET)) expect(deps).toContain(secret.urn);
});

test("with an external database the Job waits for its password Secret", async () => {
  const run = await render(
    { contentOrigin: "https://pulp.example.com", database: { external: { host: "db.example.com" } } },
    { databasePassword: "s3cret" },
  );
  const [job] = run.ofType(JOB);
  const dbSecret = run.k8s("Secret", "pulp-database");
  expect(run.dependenciesOf(job)).toContain(dbSecret.urn);
  expect(run.ofType(CNPG)).toHaveLength(0);
});
