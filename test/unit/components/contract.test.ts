// Unit, under Pulumi mocks: the product keeps its side of components/contract.ts. Every object that holds
// data says so in the holds annotation, the markers read back what they write, and nothing else matches.
import {
  holdingOf,
  readUpgradePlan,
  readUpgradeRefusal,
  UPGRADE_KINDS,
  upgradePlanMessage,
} from "../../../components/contract";
import { planUpgrade, UpgradeRefused } from "../../../components/upgrade/plan";
import { MINIMAL } from "../helpers/configs";
import { render } from "../helpers/render";

jest.setTimeout(60_000);

test("every protected Kubernetes object, and every data kind, carries the holds annotation", async () => {
  const run = await render(
    {
      ...MINIMAL,
      database: { cloudnativepg: { instances: 1 } },
      storage: { pvc: { size: "10Gi" } },
      tokenAuth: true,
      dataVolumes: [{ name: "seed", url: "https://mirror.example.com/seed.tar", size: "1Gi" }],
    },
    {},
  );
  const held = (type: string) =>
    run.ofType(type).map((r) => [r.name, holdingOf(r.inputs?.metadata?.annotations)]);
  expect(held("kubernetes:core/v1:PersistentVolumeClaim")).toEqual([[expect.any(String), "artifacts"]]);
  expect(held("kubernetes:postgresql.cnpg.io/v1:Cluster")).toEqual([[expect.any(String), "database"]]);
  expect(held("kubernetes:cdi.kubevirt.io/v1beta1:DataVolume")).toEqual([[expect.any(String), "import"]]);
  expect(held("kubernetes:core/v1:Namespace")).toEqual([[expect.any(String), "namespace"]]);
  const kubeProtected = run.resources.filter((r) => r.type.startsWith("kubernetes:") && r.protect);
  expect(kubeProtected.length).toBeGreaterThan(4);
  for (const r of kubeProtected)
    expect([r.name, holdingOf(r.inputs?.metadata?.annotations)]).toEqual([r.name, expect.any(String)]);
});

test("an upgrade-plan diagnostic reads back as its kind, with or without the engine's severity prefix", () => {
  for (const kind of UPGRADE_KINDS) {
    expect(readUpgradePlan(upgradePlanMessage(kind, "text"))).toEqual({ kind, summary: "text" });
    expect(readUpgradePlan(`warning: ${upgradePlanMessage(kind, "x")}`)?.kind).toBe(kind);
  }
  expect(readUpgradePlan("Upgrade plan: upgrade 1 -> 2 NEEDS DOWNTIME")).toBeUndefined();
  expect(readUpgradePlan("Upgrade plan [sideways]: x")).toBeUndefined();
});

test("a refusal carries the marker, however the engine wraps the error; a config error does not", () => {
  let message = "";
  try {
    planUpgrade("3.84.0", "3.70.0");
  } catch (e) {
    expect(e).toBeInstanceOf(UpgradeRefused);
    message = (e as Error).message;
  }
  const wrapped = `Running program '/p' failed with an unhandled exception:\nUpgradeRefused: ${message}`;
  expect(readUpgradeRefusal(wrapped)).toMatch(/^pulpcore 3.84.0 is deployed/);
  expect(readUpgradeRefusal("Invalid Pulp stack config: pulp:pulpcoreVersion must be x.y.z")).toBeUndefined();
});
