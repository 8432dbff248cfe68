// Unit (Pulumi mocks, and a stand-in for the live Cluster that Pulp.history reads): a change to the
// CloudNativePG cluster that the operator's webhook would refuse halfway through an update (a major
// downgrade, an in-place upgrade to PostgreSQL 15 or older, a new image and new settings at once) is refused
// before anything is registered, naming the cluster and a pasteable fix; a major upgrade is warned about.
import * as pulumi from "@pulumi/pulumi";
import { parseConfig } from "../../../../components/config/parse";
import {
  databaseChangeProblem,
  DatabaseChangeRefused,
  LiveDatabaseCluster,
  majorUpgradeNotice,
  readDatabaseCluster,
} from "../../../../components/database/clusterChange";
import { Pulp } from "../../../../components/pulp";
import type { KubeApi } from "../../../../components/upgrade/kubeApi";
import { MINIMAL } from "../../helpers/configs";
import { MockRun, runWithMocks } from "../../helpers/pulumiMocks";

const PG15 = "ghcr.io/cloudnative-pg/postgresql:15.8";
const PG17 = "ghcr.io/cloudnative-pg/postgresql:17.2";
const LIVE: LiveDatabaseCluster = {
  name: "pulp-db",
  imageName: PG15,
  parameters: { max_connections: "100", archive_timeout: "5min" },
  dataMajor: 15,
};

describe("databaseChangeProblem", () => {
  test("the same image, settings only, an unknown tag, a first install: nothing to refuse", () => {
    expect(
      databaseChangeProblem(LIVE, { imageName: PG15, parameters: { max_connections: "300" } }, "pulp"),
    ).toBe(undefined);
    expect(databaseChangeProblem(LIVE, { parameters: { max_connections: "300" } }, "pulp")).toBe(undefined);
    expect(databaseChangeProblem(LIVE, { imageName: "example.com/postgres:custom" }, "pulp")).toBe(undefined);
    expect(databaseChangeProblem(null, { imageName: PG17, parameters: { work_mem: "8MB" } }, "pulp")).toBe(
      undefined,
    );
    // A new image with the settings the cluster already has.
    expect(
      databaseChangeProblem(LIVE, { imageName: PG17, parameters: { max_connections: "100" } }, "pulp"),
    ).toBe(undefined);
  });

  test("a major downgrade names both versions and the command that puts the image back", () => {
    const problem = databaseChangeProblem(
      { ...LIVE, imageName: PG17, dataMajor: 17 },
      { imageName: PG15 },
      "pulp",
    );
    expect(problem).toContain(
      "runs PostgreSQL 15, but the data of Cluster pulp-db in namespace pulp is PostgreSQL 17's",
    );
    expect(problem).toContain("nothing was changed");
    expect(problem).toContain(`pulumi config set --path 'pulp:database.cloudnativepg.imageName' ${PG17}`);
  });

  test("an in-place upgrade to PostgreSQL 15 or older is refused, as the operator refuses it", () => {
    const problem = databaseChangeProblem(
      { ...LIVE, imageName: "ghcr.io/cloudnative-pg/postgresql:14.12", dataMajor: 14 },
      { imageName: PG15 },
      "pulp",
    );
    expect(problem).toContain("from PostgreSQL 14 to 15");
    expect(problem).toContain("only to PostgreSQL 16 or newer");
  });

  test("a new image and new settings in one update are refused, naming the settings and the order", () => {
    const problem = databaseChangeProblem(
      LIVE,
      { imageName: PG17, parameters: { max_connections: "300", work_mem: "8MB" } },
      "pulp",
    );
    expect(problem).toContain("(max_connections, work_mem) both change Cluster pulp-db in namespace pulp");
    expect(problem).toContain(
      `Apply the settings first, with the image it runs: pulumi config set --path 'pulp:database.cloudnativepg.imageName' ${PG15}`,
    );
  });
});

test("majorUpgradeNotice: a higher major is announced with the outage and the backup command; the same major is not", () => {
  expect(majorUpgradeNotice(LIVE, { imageName: "ghcr.io/cloudnative-pg/postgresql:15.10" }, "pulp")).toBe(
    undefined,
  );
  expect(majorUpgradeNotice({ ...LIVE, dataMajor: undefined }, { imageName: PG17 }, "pulp")).toBe(undefined);
  const notice = majorUpgradeNotice(LIVE, { imageName: PG17 }, "pulp");
  expect(notice).toContain("PostgreSQL 15 -> 17");
  expect(notice).toContain("stopping every instance while pg_upgrade runs");
  expect(notice).toContain("npx pulp-backup now -n pulp");
});

test("readDatabaseCluster reads the image, the settings and the data's major version; null when absent", async () => {
  const asked: string[] = [];
  const api = (answer: unknown): KubeApi =>
    ({
      request: async (_: string, path: string) => {
        asked.push(path);
        return answer;
      },
    }) as unknown as KubeApi;
  const live = await readDatabaseCluster(
    api({
      spec: { imageName: PG15, postgresql: { parameters: { max_connections: "100" } } },
      status: { pgDataImageInfo: { image: PG15, majorVersion: 15 } },
    }),
    "pulp",
    "pulp-db",
  );
  expect(live).toEqual({
    name: "pulp-db",
    imageName: PG15,
    parameters: { max_connections: "100" },
    dataMajor: 15,
  });
  expect(asked).toEqual(["/apis/postgresql.cnpg.io/v1/namespaces/pulp/clusters/pulp-db"]);
  expect(await readDatabaseCluster(api(undefined), "pulp", "pulp-db")).toBe(null);
});

describe("Pulp.create against the live Cluster", () => {
  async function create(database: LiveDatabaseCluster, cnpg: Record<string, unknown>): Promise<MockRun> {
    return runWithMocks({ config: {}, cluster: { deployments: [], database } }, async () => {
      await Pulp.create("pulp", {
        config: parseConfig({ ...MINIMAL, database: { cloudnativepg: cnpg } }),
        secrets: {},
        cluster: {},
      });
    });
  }

  test("a refused change registers nothing", async () => {
    const refused = create(LIVE, { imageName: PG17, parameters: { max_connections: "300" } });
    await expect(refused).rejects.toThrow(DatabaseChangeRefused);
    await expect(refused).rejects.toThrow("both change Cluster pulp-db");
  });

  test("a major upgrade goes ahead, warned about once", async () => {
    const warnings: string[] = [];
    const warn = jest.spyOn(pulumi.log, "warn").mockImplementation(async (message: string) => {
      warnings.push(message);
    });
    let run: MockRun;
    try {
      run = await create(LIVE, { imageName: PG17 });
    } finally {
      warn.mockRestore();
    }
    expect(run.errors).toEqual([]);
    expect(warnings.filter((w) => w.includes("PostgreSQL 15 -> 17"))).toHaveLength(1);
    const cluster = run.ofType("kubernetes:postgresql.cnpg.io/v1:Cluster")[0];
    expect(cluster.inputs.spec.imageName).toBe(PG17);
  });
});
