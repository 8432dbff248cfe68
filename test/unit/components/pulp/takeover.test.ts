// Unit (Pulumi mocks): Pulp.create beside pulp-operator's install, out of the operator's hands (its Pulp
// resource deleted with --cascade=orphan), with the operator's claim and database in place. The plan comes
// from the release the operator's image names; another release is refused before anything is registered.
import * as pulumi from "@pulumi/pulumi";
import { parseConfig } from "../../../../components/config/parse";
import { Pulp } from "../../../../components/pulp";
import { Found, HistoryMissing } from "../../../../components/upgrade/history";
import { MockRun, runWithMocks } from "../../helpers/pulumiMocks";
import { JOB } from "../../helpers/render";

const OPERATOR_IMAGE = "quay.io/pulp/pulp-minimal:3.85.0";
const CLUSTER: Found = {
  deployments: ["api", "content", "worker", "web"].map((component) => ({
    name: `example-${component}`,
    labels: {
      "app.kubernetes.io/component": component,
      "app.kubernetes.io/managed-by": "pulp-operator",
      pulp_cr: "example",
    },
    image: component === "web" ? "quay.io/pulp/pulp-web:3.85.0" : OPERATOR_IMAGE,
    owners: [],
  })),
  claim: { name: "example-file-storage", accessModes: ["ReadWriteMany"], owners: [], deleting: false },
};
const RAW = {
  namespace: "pulp",
  createNamespace: false,
  instanceName: "example-pulumi",
  contentOrigin: "https://pulp.example.com",
  storage: { pvc: { existingClaim: "example-file-storage" } },
  database: { external: { host: "example-database-svc", name: "pulp", user: "pulp" } },
};

async function takeOver(image: string): Promise<{ run: MockRun; pulp: Pulp; warnings: string[] }> {
  const warnings: string[] = [];
  const warn = jest.spyOn(pulumi.log, "warn").mockImplementation(async (message: string) => {
    warnings.push(message);
  });
  let pulp: Pulp | undefined;
  try {
    const run = await runWithMocks({ config: {}, cluster: CLUSTER }, async () => {
      const config = parseConfig({ ...RAW, image }, new Set(["databasePassword"]));
      pulp = await Pulp.create("pulp", { config, secrets: { databasePassword: "x" }, cluster: {} });
    });
    return { run, pulp: pulp!, warnings };
  } finally {
    warn.mockRestore();
  }
}

test("at the operator's release: planned from it, migrated by this install's Job, the Deployments to stop named", async () => {
  const { run, pulp, warnings } = await takeOver(OPERATOR_IMAGE);
  expect(run.errors).toEqual([]);
  expect(pulp.upgrade).toMatchObject({ kind: "none", to: "3.85.0" });
  expect(run.ofType(JOB).some((j) => j.inputs.metadata.name.startsWith("example-pulumi-migrate"))).toBe(true);
  expect(warnings).toEqual(
    expect.arrayContaining([
      expect.stringContaining(
        "example-pulumi takes over pulp-operator's install at pulpcore 3.85.0, the release its image names",
      ),
      expect.stringContaining(
        "kubectl scale deployment -n pulp example-api example-content example-worker example-web --replicas=0",
      ),
    ]),
  );
});

test("at another release: refused before the component exists, with the image to take it over at", async () => {
  const refused = takeOver("quay.io/pulp/pulp-minimal:3.86.1");
  await expect(refused).rejects.toThrow(HistoryMissing);
  await expect(refused).rejects.toThrow(
    "which runs pulpcore 3.85.0, at pulpcore 3.86.1 (quay.io/pulp/pulp-minimal:3.86.1); nothing was changed. " +
      "Take it over at the release it runs, then upgrade as any other update: pulumi config set pulp:image " +
      "quay.io/pulp/pulp-minimal:3.85.0",
  );
});
