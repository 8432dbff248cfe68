// Unit, under Pulumi mocks (test/unit/helpers/pulumiMocks.ts): what an upgrade (a new image tag) changes.
// The version label sits only where it means something, so a rolling upgrade writes only what runs Pulp.
import { MINIMAL } from "../../helpers/configs";
import { MockRun, Registered } from "../../helpers/pulumiMocks";
import { CNPG, DATA_VOLUME, DEPLOYMENT, JOB, PVC, render } from "../../helpers/render";

const VERSION = "app.kubernetes.io/version";
const KEY_SECRETS = ["pulp-secret-key", "pulp-db-fields-encryption", "pulp-admin-password"];
const INSTALL = {
  ...MINIMAL,
  redis: { enabled: true },
  web: { enabled: true },
  dataVolumes: [{ name: "seed", url: "https://example.com/seed.tar", size: "1Gi" }],
};

/** The inputs of each data-holding object (generated key values differ from run to run under mocks). */
function dataHolding(run: MockRun): Record<string, unknown> {
  const objects: Registered[] = [
    ...run.ofType(PVC),
    ...run.ofType(CNPG),
    ...run.ofType(DATA_VOLUME),
    ...run.ofType("kubernetes:core/v1:Namespace"),
    ...KEY_SECRETS.map((name) => run.k8s("Secret", name)),
  ];
  return Object.fromEntries(
    objects.map((r) => [
      r.urn,
      JSON.parse(JSON.stringify(r.inputs).replace(/generated-[^"]*/g, "<generated>")),
    ]),
  );
}

const upgrade = async () => ({
  before: await render({ ...INSTALL, image: "quay.io/pulp/pulp-minimal:3.85.0" }),
  after: await render({ ...INSTALL, image: "quay.io/pulp/pulp-minimal:3.86.1" }),
});

test("an upgrade changes no data-holding object: PVC, database Cluster, key Secrets, DataVolumes, Namespace", async () => {
  const { before, after } = await upgrade();
  const held = dataHolding(before);
  // The test can fail: every kind is there (a missing kind would compare two empty sets).
  expect(Object.keys(held).map((urn) => urn.split("::")[2].split("$").pop())).toEqual(
    expect.arrayContaining([PVC, CNPG, DATA_VOLUME, "kubernetes:core/v1:Namespace"]),
  );
  expect(dataHolding(after)).toEqual(held);
});

test("the version label is on the Pulp pod templates and the migration Job, and nowhere else", async () => {
  const { after } = await upgrade();
  const carriers = after.resources
    .filter((r) => r.custom && r.type.startsWith("kubernetes:"))
    .flatMap((r) => {
      const found: string[] = [];
      if (r.inputs.metadata?.labels?.[VERSION]) found.push(`${r.inputs.metadata.name}`);
      if (r.inputs.spec?.template?.metadata?.labels?.[VERSION]) found.push(`${r.inputs.metadata.name} pods`);
      return found;
    });
  const job = after.ofType(JOB)[0].inputs.metadata.name;
  expect(carriers.sort()).toEqual(
    ["pulp-api pods", "pulp-content pods", "pulp-worker pods", job, `${job} pods`].sort(),
  );
  for (const d of after.ofType(DEPLOYMENT).filter((d) => /api|content|worker/.test(d.inputs.metadata.name))) {
    expect(d.inputs.spec.template.metadata.labels[VERSION]).toBe("3.86.1");
  }
});

test("an upgrade leaves Redis and pulp-web (images of their own) exactly as they were", async () => {
  const { before, after } = await upgrade();
  for (const name of ["pulp-redis", "pulp-web"]) {
    expect(after.k8s("Deployment", name).inputs).toEqual(before.k8s("Deployment", name).inputs);
  }
});
