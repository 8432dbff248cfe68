// Order is what keeps an upgrade safe: nothing rolls before the migration Job, and the Job runs only
// once the database, the secrets, the settings and the storage exist.
import { MINIMAL } from "../../helpers/configs";
import { contentHash } from "../../../../components/common/hash";
import { ROLLED_OUT_ANNOTATION } from "../../../../components/workload/workload";
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

// pulumi-kubernetes's own Deployment await can return before a rollout has started (workload.ts says why);
// each Deployment's rollout check (a DeploymentPatch that only annotates it) is what the order rests on.
test("a rolling upgrade: api and content roll after the workers' rollout check; the history waits for all three", async () => {
  const run = await render({ ...MINIMAL, image: "quay.io/pulp/pulp-minimal:3.85.1" }, {}, false, {
    idle: false,
    pulpcoreVersion: "3.85.0",
  });
  const check = (name: string) => run.k8s("DeploymentPatch", name);
  for (const name of ["pulp-api", "pulp-content", "pulp-worker"]) {
    // It annotates, and sets nothing a rollout or another field manager would notice.
    expect(check(name).inputs.spec).toBeUndefined();
    expect(Object.keys(check(name).inputs.metadata.annotations)).toEqual([ROLLED_OUT_ANNOTATION]);
    // The template's hash: a new annotation bumps a Deployment's generation, so the generation would never
    // settle (a refreshed preview would always want to update the check).
    expect(check(name).inputs.metadata.annotations[ROLLED_OUT_ANNOTATION]).toBe(
      contentHash(run.k8s("Deployment", name).inputs.spec.template),
    );
    expect(run.dependenciesOf(check(name))).toContain(run.k8s("Deployment", name).urn);
    expect(run.dependenciesOf(run.k8s("ConfigMap", "pulp-deployed"))).toContain(check(name).urn);
  }
  for (const name of ["pulp-api", "pulp-content"])
    expect(run.dependenciesOf(run.k8s("Deployment", name))).toContain(check("pulp-worker").urn);
  expect(run.dependenciesOf(run.k8s("Deployment", "pulp-worker"))).not.toContain(check("pulp-api").urn);
});
