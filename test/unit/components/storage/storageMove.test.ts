// Unit: the refusal of a config that would point a running install's pods at another artifact storage
// (components/storage/storageMove.ts), through decideInstall as the Pulp component calls it, with the
// history's record as the cluster would return it (upgrade/history.ts deployedOf). No Pulumi mocks.
import { parseConfig } from "../../../../components/config/parse";
import { decideInstall } from "../../../../components/decide";
import { StorageMoveRefused } from "../../../../components/storage/storageMove";
import { Deployed, FIRST_INSTALL } from "../../../../components/upgrade/deployed";
import { deployedOf, historyData } from "../../../../components/upgrade/history";
import { MINIMAL } from "../../helpers/configs";

const S3 = { s3: { bucket: "pulp-artifacts", accessKeyId: "AKIAEXAMPLE" } };
const SECRETS = { s3SecretAccessKey: "s3-secret" };

function decide(storage: Record<string, unknown> | undefined, deployed: Deployed) {
  const supplied = new Set(["s3SecretAccessKey" as const]);
  const config = parseConfig({ ...MINIMAL, ...(storage ? { storage } : {}) }, supplied, SECRETS);
  return decideInstall(config, deployed, supplied);
}

/** What an install whose last update decided `storage` records, read back as the next update reads it. */
function installedWith(storage: Record<string, unknown> | undefined): Deployed {
  const d = decide(storage, FIRST_INSTALL);
  return deployedOf(
    historyData({
      pulpcoreVersion: d.identity.version,
      idle: false,
      pluginVersions: {},
      artifactStorage: d.artifactStorage,
    }),
  )!;
}

test("each storage is named as a person would compare them, and the history carries the name", () => {
  expect(decide(undefined, FIRST_INSTALL).artifactStorage).toBe("claim pulp-artifacts");
  expect(decide({ pvc: { existingClaim: "example-file-storage" } }, FIRST_INSTALL).artifactStorage).toBe(
    "claim example-file-storage",
  );
  expect(decide(S3, FIRST_INSTALL).artifactStorage).toBe("s3://pulp-artifacts");
  expect(installedWith(S3).artifactStorage).toBe("s3://pulp-artifacts");
});

test("the same storage again, or a change within it (a larger claim, another region), is no move", () => {
  expect(() => decide(undefined, installedWith(undefined))).not.toThrow();
  expect(() => decide({ pvc: { size: "200Gi" } }, installedWith(undefined))).not.toThrow();
  expect(() => decide({ s3: { ...S3.s3, region: "eu-west-1" } }, installedWith(S3))).not.toThrow();
});

test.each([
  ["the program's claim to a bucket", undefined, S3, "claim pulp-artifacts", "s3://pulp-artifacts"],
  ["a bucket to a claim", S3, undefined, "s3://pulp-artifacts", "claim pulp-artifacts"],
  ["one bucket to another", S3, { s3: { ...S3.s3, bucket: "other" } }, "s3://pulp-artifacts", "s3://other"],
  [
    "the program's claim to a claim of the user's",
    undefined,
    { pvc: { existingClaim: "copied" } },
    "claim pulp-artifacts",
    "claim copied",
  ],
])("refused before anything is created: %s", (_, from, to, recorded, wanted) => {
  const deployed = installedWith(from);
  expect(() => decide(to, deployed)).toThrow(StorageMoveRefused);
  expect(() => decide(to, deployed)).toThrow(
    `pulp:storage names ${wanted} for the artifacts, but instance pulp keeps them in ${recorded} ` +
      "(its history, configmap pulp-deployed in namespace pulp); nothing was changed.",
  );
  expect(() => decide(to, deployed)).toThrow(`pulumi config set --path pulp:storage.movedFrom '${recorded}'`);
});

test("storage.movedFrom naming the recorded place lets the move through, and records the new place", () => {
  const deployed = installedWith(undefined);
  const moved = decide({ ...S3, movedFrom: "claim pulp-artifacts" }, deployed);
  expect(moved.artifactStorage).toBe("s3://pulp-artifacts");
  // Left set after the move, it changes nothing: the history now names the bucket.
  expect(() => decide({ ...S3, movedFrom: "claim pulp-artifacts" }, installedWith(S3))).not.toThrow();
});

test("storage.movedFrom naming another place is refused, and the refusal says it is not where they are", () => {
  expect(() => decide({ ...S3, movedFrom: "claim elsewhere" }, installedWith(undefined))).toThrow(
    '(storage.movedFrom is "claim elsewhere", which is not where they are)',
  );
});

test("an install whose history predates the record, and a new install, are not checked", () => {
  expect(() => decide(S3, { idle: false, pulpcoreVersion: "3.123.1" })).not.toThrow();
  expect(() => decide(S3, FIRST_INSTALL)).not.toThrow();
});
