// Unit, under Pulumi mocks: what `pulumi up` awaits on the CloudNativePG Cluster. With an image whose tag
// names a major, the data directory must be at that major as well as the Cluster Ready, so that an in-place
// major upgrade holds `up` until pg_upgrade is done and the instance serves (on real Pulp and the real
// operator: test/e2e/real/postgresMajorUpgrade.test.ts, where `up` returned mid-upgrade on Ready alone).
import { clusterAwait } from "../../../../components/database/database";
import { MINIMAL } from "../../helpers/configs";
import { render } from "../../helpers/render";

const CLUSTER = "kubernetes:postgresql.cnpg.io/v1:Cluster";

test("an image tagged with its major: Ready and the data directory at that major, as the provider's JSON list", () => {
  expect(JSON.parse(clusterAwait("ghcr.io/cloudnative-pg/postgresql:17.6-system-trixie"))).toEqual([
    "condition=Ready",
    "jsonpath={.status.pgDataImageInfo.majorVersion}=17",
  ]);
  expect(JSON.parse(clusterAwait("localhost/postgresql:15"))).toEqual([
    "condition=Ready",
    "jsonpath={.status.pgDataImageInfo.majorVersion}=15",
  ]);
});

test("no image, or one whose major the tag does not say (a digest, a name): Ready alone, as before", () => {
  expect(clusterAwait(undefined)).toBe("condition=Ready");
  expect(
    clusterAwait(
      "ghcr.io/cloudnative-pg/postgresql@sha256:0000000000000000000000000000000000000000000000000000000000000000",
    ),
  ).toBe("condition=Ready");
  expect(clusterAwait("registry.example.com/postgres:latest")).toBe("condition=Ready");
});

test("the Cluster carries it in pulumi.com/waitFor", async () => {
  const run = await render({
    ...MINIMAL,
    database: { cloudnativepg: { imageName: "ghcr.io/cloudnative-pg/postgresql:17.6" } },
  });
  const [cluster] = run.ofType(CLUSTER);
  expect(JSON.parse(cluster.inputs.metadata.annotations["pulumi.com/waitFor"])).toEqual([
    "condition=Ready",
    "jsonpath={.status.pgDataImageInfo.majorVersion}=17",
  ]);
});
