// Unit: the CDI import checks (plain calls over API objects shaped as the API server and CDI v1.58 write
// them), and how the program wires them (under Pulumi mocks). The real CDI importing on the real node:
// test/e2e/cluster/cdi.sh and test/e2e/real/restore.test.ts.
import { bytesOf, importVerdict, preflightProblems } from "../../../../components/cdi/importWatch";
import { MINIMAL } from "../../helpers/configs";
import { DATA_VOLUME, JOB, render } from "../../helpers/render";

const TARGET = { namespace: "pulp", name: "seed-dump", size: "20Gi" };
const quota = (hard: string, used: string, key = "requests.storage") => ({
  metadata: { name: "pulp-quota" },
  status: { hard: { [key]: hard }, used: { [key]: used } },
});
const storageClass = (name: string, isDefault = false) => ({
  metadata: {
    name,
    annotations: isDefault ? { "storageclass.kubernetes.io/is-default-class": "true" } : {},
  },
});

test("quantities in bytes", () => {
  expect([bytesOf("20Gi"), bytesOf("500M"), bytesOf("1"), bytesOf("1.5Ki")]).toEqual([
    20 * 2 ** 30,
    5e8,
    1,
    1536,
  ]);
  expect(bytesOf("lots")).toBeNaN();
});

test("preflight: the real quota's room is its hard limit less what is used, and an import needs twice its size", () => {
  const classes = [storageClass("standard", true)];
  expect(preflightProblems(TARGET, [quota("100Gi", "50Gi")], classes)).toEqual([]);
  expect(preflightProblems(TARGET, [quota("100Gi", "70Gi")], classes)).toEqual([
    "ResourceQuota pulp-quota in pulp has 30Gi of requests.storage left (hard 100Gi, used 70Gi), and importing " +
      "seed-dump needs 40Gi: its 20Gi volume and as much again for CDI's scratch space. Raise the quota: kubectl -n pulp " +
      `patch resourcequota pulp-quota --type merge -p '{"spec":{"hard":{"requests.storage":"110Gi"}}}'`,
  ]);
  // A per-class quota counts for the class the import uses.
  const perClass = quota("30Gi", "0", "cephfs.storageclass.storage.k8s.io/requests.storage");
  expect(
    preflightProblems({ ...TARGET, storageClass: "cephfs" }, [perClass], [storageClass("cephfs")]),
  ).toHaveLength(1);
  expect(preflightProblems(TARGET, [perClass], classes)).toEqual([]);
});

test("preflight: a missing storage class, no default, or more than one default", () => {
  const named = { ...TARGET, storageClass: "fast" };
  expect(preflightProblems(named, [], [storageClass("standard", true)])).toEqual([
    "StorageClass fast for seed-dump does not exist. pulumi config set --path '<the key of seed-dump>.storageClass' <one of: standard>",
  ]);
  expect(preflightProblems(TARGET, [], [storageClass("standard")])[0]).toMatch(
    /^seed-dump names no storage class and the cluster has no default one: its PVC would wait forever/,
  );
  expect(preflightProblems(TARGET, [], [storageClass("a", true), storageClass("b", true)])[0]).toMatch(
    /has 2 defaults \(a, b\): which one CDI's volumes get is not defined/,
  );
  // Classes that could not be read (an operator workspace without the cluster-scoped grant): only the quota.
  expect(preflightProblems(TARGET, [], undefined)).toEqual([]);
});

const importer = (containerStatus: object, conditions: object[] = []) => ({
  metadata: { name: "importer-seed-dump" },
  status: { phase: "Running", conditions, containerStatuses: [{ name: "importer", ...containerStatus }] },
});
const seen = (o: Partial<Parameters<typeof importVerdict>[1]>) => ({ pvcs: [], pods: [], events: [], ...o });

test("during the import: done, waiting, or a failure with its cause", () => {
  const at = (phase: string, extra = {}) => ({ status: { phase, ...extra } });
  expect(importVerdict(TARGET, seen({ dataVolume: at("Succeeded") }))).toEqual({ state: "done" });
  expect(importVerdict(TARGET, seen({ dataVolume: at("ImportInProgress", { progress: "42.0%" }) }))).toEqual({
    state: "waiting",
    detail: "phase ImportInProgress, 42.0%",
  });
  expect(importVerdict(TARGET, seen({}))).toEqual({ state: "waiting", detail: "phase (none yet)" });

  // The quota, as CDI reports the scratch PVC it could not create.
  const overQuota = importVerdict(
    TARGET,
    seen({
      dataVolume: at("Pending"),
      events: [
        {
          reason: "ErrExceededQuota",
          message:
            'persistentvolumeclaims "seed-dump-scratch" is forbidden: exceeded quota: pulp-quota, requested: requests.storage=20Gi, used: requests.storage=20Gi, limited: requests.storage=30Gi',
        },
      ],
    }),
  );
  expect(overQuota).toMatchObject({ state: "failed" });
  expect((overQuota as { message: string }).message).toMatch(
    /^DataVolume pulp\/seed-dump: the namespace quota has no room: persistentvolumeclaims "seed-dump-scratch" is forbidden: exceeded quota.*CDI needs the volume's size twice/,
  );

  // A stale scratch storage class (CDIConfig), told apart from the target's own class.
  const stale = importVerdict(
    TARGET,
    seen({
      dataVolume: at("ImportScheduled"),
      pvcs: [{ metadata: { name: "seed-dump-scratch" }, spec: { storageClassName: "old-fast" } }],
      events: [{ reason: "ProvisioningFailed", message: 'storageclass.storage.k8s.io "old-fast" not found' }],
    }),
  );
  expect((stale as { message: string }).message).toMatch(
    /the scratch space's storage class old-fast does not exist \(a stale scratchSpaceStorageClass in CDIConfig\).*kubectl patch cdiconfig config/,
  );

  const noClass = importVerdict(
    TARGET,
    seen({
      events: [
        {
          reason: "FailedBinding",
          message: "no persistent volumes available for this claim and no storage class is set",
        },
      ],
    }),
  );
  expect((noClass as { message: string }).message).toMatch(
    /names no storage class and the cluster has no default/,
  );

  /** The verdict while the importer pod is unschedulable for `message`. */
  const unschedulable = (message: string) =>
    importVerdict(
      TARGET,
      seen({
        dataVolume: at("ImportScheduled"),
        pods: [
          importer({ state: { waiting: { reason: "ContainerCreating" } } }, [
            { type: "PodScheduled", status: "False", reason: "Unschedulable", message },
          ]),
        ],
      }),
    );
  const pending = unschedulable("0/4 nodes are available: 4 Insufficient memory.");
  expect((pending as { message: string }).message).toBe(
    "DataVolume pulp/seed-dump: importer pod importer-seed-dump cannot be scheduled: 0/4 nodes are available: 4 Insufficient memory.",
  );

  // Before CDI has made the scratch PVC, or while a PVC is provisioned, the scheduler waits: so does the watch.
  for (const message of [
    '0/4 nodes are available: persistentvolumeclaim "seed-dump-scratch" not found. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.',
    "0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
  ]) {
    const passing = unschedulable(message);
    expect(passing.state).toBe("waiting");
  }

  const crashing = importVerdict(
    TARGET,
    seen({
      dataVolume: at("ImportInProgress"),
      pods: [
        importer({
          restartCount: 3,
          state: { waiting: { reason: "CrashLoopBackOff" } },
          lastState: { terminated: { exitCode: 1, message: "Unable to process data: unexpected EOF\n" } },
        }),
      ],
    }),
  );
  expect((crashing as { message: string }).message).toBe(
    "DataVolume pulp/seed-dump: importer pod importer-seed-dump keeps failing (restarted 3 times, last exit 1): " +
      "Unable to process data: unexpected EOF. Check the URL serves an uncompressed tar",
  );
  // Two restarts (in CrashLoopBackOff between them) are CDI retrying, not yet a loop.
  expect(
    importVerdict(
      TARGET,
      seen({
        dataVolume: at("ImportInProgress"),
        pods: [importer({ restartCount: 2, state: { waiting: { reason: "CrashLoopBackOff" } } })],
      }),
    ),
  ).toMatchObject({ state: "waiting" });
});

test("each DataVolume is awaited by its watch (not by the provider), and the migration waits for the watch", async () => {
  const run = await render({
    ...MINIMAL,
    dataVolumes: [{ name: "seed-dump", url: "https://mirror.example.com/dump.tar", size: "20Gi" }],
  });
  const [dv] = run.ofType(DATA_VOLUME);
  expect(dv.inputs.metadata.annotations["pulumi.com/skipAwait"]).toBe("true");
  const [watch] = run.ofType("pulumi-nodejs:dynamic/pulp:ImportWatch");
  expect(watch.inputs).toMatchObject({
    namespace: "pulp",
    name: "seed-dump",
    size: "20Gi",
    timeoutSeconds: 3600,
  });
  expect(run.dependenciesOf(watch).has(dv.urn)).toBe(true);
  const migration = run.ofType(JOB).find((j) => j.inputs.metadata.name.startsWith("pulp-migrate-"))!;
  expect(run.dependenciesOf(migration).has(watch.urn)).toBe(true);
});
