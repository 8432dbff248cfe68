// Unit (Pulumi mocks, and a stand-in Kubernetes API): a claim of the user's (storage.pvc.existingClaim)
// holds the artifacts. The program never declares it, mounts it wherever it would mount its own, and
// refuses before anything is registered when the cluster's claim would fail the pods or lose the data.
import { parseConfig } from "../../../../components/config/parse";
import { Pulp } from "../../../../components/pulp";
import {
  ExistingClaimRefused,
  existingClaimProblem,
  LiveClaim,
  readClaim,
} from "../../../../components/storage/existingClaim";
import type { KubeApi } from "../../../../components/upgrade/kubeApi";
import { MINIMAL, problemsOf } from "../../helpers/configs";
import { MockRun, runWithMocks } from "../../helpers/pulumiMocks";
import { CRONJOB, DEPLOYMENT, JOB, PVC, podSpecs } from "../../helpers/render";

const OPERATORS = "example-file-storage";
const GOOD: LiveClaim = { name: OPERATORS, accessModes: ["ReadWriteMany"], owners: [], deleting: false };
const RAW = {
  ...MINIMAL,
  storage: { pvc: { existingClaim: OPERATORS } },
  backup: { enabled: true, image: "ghcr.io/cloudnative-pg/postgresql:17" },
};

async function create(claim: LiveClaim | null): Promise<MockRun> {
  return runWithMocks({ config: {}, cluster: { deployments: [], claim } }, async () => {
    await Pulp.create("pulp", { config: parseConfig(RAW), secrets: {}, cluster: {} });
  });
}

test("the user's claim is mounted at /var/lib/pulp by every pod that mounts artifacts, and never declared", async () => {
  const run = await create(GOOD);
  expect(run.errors).toEqual([]);
  expect(run.ofType(PVC).map((c) => c.inputs.metadata.name)).not.toContain("pulp-artifacts");
  expect(run.ofType(PVC).filter((c) => c.inputs.metadata.name === OPERATORS)).toEqual([]);
  const mounting = podSpecs(run)
    .filter(([, spec]) =>
      ((spec.volumes ?? []) as { persistentVolumeClaim?: { claimName?: string } }[]).some(
        (v) => v.persistentVolumeClaim?.claimName === OPERATORS,
      ),
    )
    .map(([name]) => name);
  expect(mounting).toEqual(
    expect.arrayContaining([
      "Deployment pulp-api",
      "Deployment pulp-content",
      "Deployment pulp-worker",
      expect.stringMatching(/^Job pulp-migrate/),
      "CronJob pulp-backup",
    ]),
  );
  expect(run.ofType(DEPLOYMENT).length + run.ofType(JOB).length + run.ofType(CRONJOB).length).toBeGreaterThan(
    4,
  );
});

test.each<[string, LiveClaim | null, RegExp]>([
  [
    "absent",
    null,
    /no PersistentVolumeClaim example-file-storage in namespace pulp.*kubectl get pvc -n pulp/,
  ],
  [
    "owned by pulp-operator's Pulp resource",
    { ...GOOD, owners: ["Pulp/example"] },
    /owned by Pulp\/example, and deleting it deletes the claim .*kubectl patch pvc example-file-storage -n pulp --type json -p '\[\{"op": "remove", "path": "\/metadata\/ownerReferences"\}\]'/,
  ],
  [
    "ReadWriteOnce",
    { ...GOOD, accessModes: ["ReadWriteOnce"] },
    /access modes are ReadWriteOnce.*Multi-Attach error/,
  ],
  ["being deleted", { ...GOOD, deleting: true }, /being deleted.*persistentVolumeReclaimPolicy/],
])("a claim %s is refused by Pulp.create, before the component exists", async (_, claim, message) => {
  const refused = create(claim);
  await expect(refused).rejects.toThrow(ExistingClaimRefused);
  await expect(refused).rejects.toThrow(message);
  await expect(refused).rejects.toThrow("nothing was changed");
});

test("the refusal prints without a stack trace; a good claim has no problem", () => {
  const problem = existingClaimProblem(null, { namespace: "pulp", name: OPERATORS })!;
  expect(new ExistingClaimRefused(problem).__pulumiRunError).toBe(true);
  expect(existingClaimProblem(GOOD, { namespace: "pulp", name: OPERATORS })).toBeUndefined();
});

test("size and storageClass beside existingClaim are refused: they are the claim's own", () => {
  expect(
    problemsOf({ storage: { pvc: { existingClaim: OPERATORS, size: "80Gi", storageClass: "nfs" } } }),
  ).toEqual([
    expect.stringMatching(
      /^pulp:storage\.pvc\.size: describes a claim the program would create.*example-file-storage/,
    ),
    expect.stringMatching(/^pulp:storage\.pvc\.storageClass: describes a claim the program would create/),
  ]);
  expect(problemsOf({ storage: { pvc: { existingClaim: "Not_A_Name" } } })).toEqual([
    expect.stringMatching(/^pulp:storage\.pvc\.existingClaim: /),
  ]);
});

test("readClaim reads access modes, owners and deletion from the API's answer; 404 is null", async () => {
  const answers: Record<string, unknown> = {
    "/api/v1/namespaces/pulp/persistentvolumeclaims/example-file-storage": {
      metadata: {
        ownerReferences: [{ kind: "Pulp", name: "example", apiVersion: "repo-manager.pulpproject.org/v1" }],
      },
      spec: { accessModes: ["ReadWriteMany"] },
    },
  };
  const api = { request: async (_: string, path: string) => answers[path] } as unknown as KubeApi;
  expect(await readClaim(api, "pulp", OPERATORS)).toEqual({
    name: OPERATORS,
    accessModes: ["ReadWriteMany"],
    owners: ["Pulp/example"],
    deleting: false,
  });
  expect(await readClaim(api, "pulp", "other")).toBeNull();
});
