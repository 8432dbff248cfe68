// Custom resources must pass the real CRDs' schemas (test/fixtures/crds, copied from upstream); the API
// server checks them again end to end.
import Ajv from "ajv";
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import { MINIMAL } from "../../helpers/configs";
import { CNPG, DATA_VOLUME, render } from "../../helpers/render";
import { CRDS } from "../../helpers/delivery";

function validatorFor(file: string, version: string) {
  const crd = yaml.load(fs.readFileSync(path.join(CRDS, file), "utf8")) as {
    spec: { versions: { name: string; schema: { openAPIV3Schema: object } }[] };
  };
  const schema = crd.spec.versions.find((v) => v.name === version)!.schema.openAPIV3Schema;
  // Kubernetes extensions (x-kubernetes-*) are not JSON schema keywords, and its formats (int32,
  // int-or-string, ...) are not JSON schema formats: types, enums, required and patterns are what count.
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  return ajv.compile(schema);
}

const cluster = validatorFor("postgresql.cnpg.io_clusters.yaml", "v1");
const dataVolume = validatorFor("cdi.kubevirt.io_datavolumes.yaml", "v1beta1");

test("the CloudNativePG Cluster passes its CRD schema", async () => {
  const run = await render({
    ...MINIMAL,
    database: {
      cloudnativepg: {
        instances: 3,
        storageClass: "fast",
        imageName: "ghcr.io/cloudnative-pg/postgresql:16.4",
      },
    },
  });
  const [cr] = run.ofType(CNPG);
  expect(cluster(cr.inputs)).toBe(true);
  expect(cluster.errors ?? []).toEqual([]);
  expect(cr.inputs.spec).toMatchObject({
    bootstrap: { initdb: { database: "pulp", owner: "pulp" } },
    primaryUpdateMethod: "switchover",
  });
  // Ready, and the data directory at the image's major (database.ts clusterAwait).
  expect(JSON.parse(cr.inputs.metadata.annotations["pulumi.com/waitFor"])).toEqual([
    "condition=Ready",
    "jsonpath={.status.pgDataImageInfo.majorVersion}=16",
  ]);
});

test("CDI DataVolumes pass their CRD schema", async () => {
  const run = await render({
    ...MINIMAL,
    dataVolumes: [
      {
        name: "seed-artifacts",
        url: "https://mirror.example.com/pulp-media.tar",
        size: "20Gi",
        storageClass: "cephfs",
        waitForFirstConsumer: true,
      },
    ],
  });
  const [dv] = run.ofType(DATA_VOLUME);
  expect(dataVolume(dv.inputs)).toBe(true);
  expect(dataVolume.errors ?? []).toEqual([]);
  expect(dv.inputs.spec).toMatchObject({
    contentType: "archive",
    source: { http: { url: "https://mirror.example.com/pulp-media.tar" } },
  });
  expect(dv.inputs.metadata.annotations["cdi.kubevirt.io/storage.bind.immediate.requested"]).toBe("true");
});

test("the schemas do reject a malformed resource", () => {
  expect(
    cluster({ apiVersion: "postgresql.cnpg.io/v1", kind: "Cluster", spec: { instances: "three" } }),
  ).toBe(false);
  expect(
    dataVolume({ apiVersion: "cdi.kubevirt.io/v1beta1", kind: "DataVolume", spec: { contentType: "zip" } }),
  ).toBe(false);
});
