// Unit (Pulumi mocks): PulpInstall, the Pulp install for programs in other Pulumi languages
// (components/multilang). It renders what Pulp.create renders for the same `pulp:` config object and
// secrets, refuses a bad config by argument path before anything else, and its arguments and outputs
// are what Pulumi's schema inference for TypeScript components can describe: the inferred schema is
// computed here by the SDK's own ComponentProvider, as the nodejs language host does for
// `pulumi package add` (the real CLI run is in testbed/langs/FINDINGS.md).
import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { ArgsError, parseArgs } from "../../../../components/config/programArgs";
import { SECRET_NAMES } from "../../../../components/config/rules";
import { PULP_INSTALL_TYPE, PulpInstall } from "../../../../components/multilang/pulpInstall";
import { Pulp } from "../../../../components/pulp";
import { MINIMAL } from "../../helpers/configs";
import { MockRun, Registered, runWithMocks } from "../../helpers/pulumiMocks";

jest.setTimeout(120_000);

const PLUGIN_DIR = path.resolve(__dirname, "../../../../components/multilang");
/** A kubeconfig given as content: used as given (no file to look for), the same in both runs. */
const KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n";
const ADMIN_PASSWORD = "typed-admin-password-5Rt";

/** Every Kubernetes object and dynamic resource by type and (namespace/)name; auto-named ones by type. */
const objects = (run: MockRun) =>
  run.resources
    .filter((r) => r.custom)
    .map((r) => `${r.type} ${r.inputs.metadata?.namespace ?? ""}/${r.inputs.metadata?.name ?? ""}`)
    .sort();

const value = <T>(o: pulumi.Output<T>) => new Promise<T>((resolve) => o.apply(resolve));

describe("under mocks", () => {
  let viaInstall: MockRun;
  let viaPulp: MockRun;
  let outputs: Record<string, unknown>;
  let pulpOutputs: Record<string, unknown>;

  beforeAll(async () => {
    viaInstall = await runWithMocks({ config: {} }, async () => {
      const install = new PulpInstall("pulp", {
        config: MINIMAL,
        adminPassword: ADMIN_PASSWORD,
        kubeconfig: KUBECONFIG,
      });
      outputs = {
        apiUrl: await value(install.apiUrl),
        contentUrl: await value(install.contentUrl),
        namespace: await value(install.namespace),
        upgradeKind: await value(install.upgradeKind),
        upgradeSummary: await value(install.upgradeSummary),
        migrationJobName: await value(install.migrationJobName),
      };
    });
    viaPulp = await runWithMocks({ config: {} }, async () => {
      const pulp = await Pulp.create("pulp", {
        config: parseArgs(MINIMAL, ["adminPassword"]),
        secrets: { adminPassword: pulumi.secret(ADMIN_PASSWORD) },
        cluster: { kubeconfig: KUBECONFIG },
      });
      pulpOutputs = {
        apiUrl: pulp.apiUrl,
        contentUrl: pulp.contentUrl,
        namespace: await value(pulp.namespace),
        upgradeKind: pulp.upgrade.kind,
        upgradeSummary: pulp.upgrade.summary,
        migrationJobName: await value(pulp.migrationJobName),
      };
    });
  });

  test("renders what Pulp.create renders for the same config object and secrets", () => {
    expect(objects(viaInstall).length).toBeGreaterThan(10);
    expect(objects(viaInstall)).toEqual(objects(viaPulp));
  });

  test("the Pulp component is its child, and the supplied secret reaches the cluster's Secret", () => {
    const [pulp] = viaInstall.ofType("pulp:index:Pulp");
    expect(pulp.urn).toContain(`${PULP_INSTALL_TYPE}$pulp:index:Pulp::pulp`);
    const holding = (r: Registered) => JSON.stringify(r.inputs).includes(ADMIN_PASSWORD);
    expect(viaInstall.ofType("kubernetes:core/v1:Secret").filter(holding)).toHaveLength(1);
  });

  test("its outputs are Pulp's", () => {
    expect(outputs).toEqual(pulpOutputs);
    expect(outputs.upgradeKind).toBe("install");
  });

  test("a bad config is refused by argument path, every problem at once", async () => {
    const refused = runWithMocks({ config: {} }, () => {
      new PulpInstall("pulp", {
        config: { ...MINIMAL, contentOrigin: "pulp.example.com", api: { replicas: -1 } },
        kubeconfig: KUBECONFIG,
      });
    });
    await expect(refused).rejects.toBeInstanceOf(ArgsError);
    await expect(refused).rejects.toThrow(/config\.contentOrigin[\s\S]*config\.api\.replicas/);
  });
});

describe("the schema Pulumi infers (the nodejs host's ComponentProvider)", () => {
  let schema: any;

  beforeAll(async () => {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { ComponentProvider } = require("@pulumi/pulumi/provider/experimental/provider");
    const entry = require(path.join(PLUGIN_DIR, "index"));
    /* eslint-enable @typescript-eslint/no-require-imports */
    const pkg = JSON.parse(fs.readFileSync(path.join(PLUGIN_DIR, "package.json"), "utf8"));
    const provider = new ComponentProvider({
      name: pkg.name,
      dirname: PLUGIN_DIR,
      components: Object.values(entry),
    });
    schema = JSON.parse(await provider.getSchema());
  });

  test("the plugin package: named pulp, versioned with the npm package, runtime nodejs", () => {
    const root = JSON.parse(fs.readFileSync(path.join(PLUGIN_DIR, "../../package.json"), "utf8"));
    expect(schema.name).toBe("pulp");
    expect(schema.version).toBe(root.version);
    expect(fs.readFileSync(path.join(PLUGIN_DIR, "PulumiPlugin.yaml"), "utf8")).toMatch(/^runtime: nodejs$/m);
    expect(Object.keys(schema.resources)).toEqual([PULP_INSTALL_TYPE]);
  });

  test("inputs: the config object (any JSON), one optional string per secret, the cluster", () => {
    const resource = schema.resources[PULP_INSTALL_TYPE];
    const inputs = resource.inputProperties;
    expect(Object.keys(inputs)).toEqual(["config", ...SECRET_NAMES, "kubeconfig", "context"]);
    expect(inputs.config).toMatchObject({
      type: "object",
      additionalProperties: { $ref: "pulumi.json#/Any" },
      plain: true,
    });
    for (const name of [...SECRET_NAMES, "kubeconfig", "context"]) {
      expect(inputs[name]).toMatchObject({ type: "string", optional: true });
    }
    expect(resource.requiredInputs).toEqual(["config"]);
  });

  test("outputs: plain strings and a boolean, nothing typed Any", () => {
    const properties = schema.resources[PULP_INSTALL_TYPE].properties;
    expect(
      Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, (v as { type: string }).type])),
    ).toEqual({
      namespace: "string",
      apiUrl: "string",
      contentUrl: "string",
      upgradeKind: "string",
      upgradeSummary: "string",
      migrationJobName: "string",
      rolledOut: "boolean",
    });
  });
});
