// unit (Pulumi mocks): examples/two-instances renders as its README promises. Its stack file is read as a
// user's would be (the instances and their keys), and the program runs as written, importing the package
// by name (mapped to components/ by jest.config.js): two instances in two namespaces, every Kubernetes
// object through the program's own provider, each instance its own history and release.
import * as fs from "fs";
import * as yaml from "js-yaml";
import * as path from "path";
import { REPO } from "../helpers/configs";
import { MockRun, runWithMocks } from "../helpers/pulumiMocks";

const DIR = path.join(REPO, "examples/two-instances");
const stackFile = yaml.load(fs.readFileSync(path.join(DIR, "Pulumi.dev.yaml"), "utf8")) as {
  config: Record<string, unknown>;
};

let run: MockRun;

beforeAll(async () => {
  run = await runWithMocks(
    {
      // The mocks' project is "pulp": the example's own keys, under that name.
      config: {
        "pulp:instances": stackFile.config["pulp-two-instances:instances"],
        "pulp:kubeconfig": "apiVersion: v1\nkind: Config\nclusters: []\n",
      },
      secretKeys: ["pulp:kubeconfig"],
    },
    async () => {
      // `export =`: the module is the function (its default, through esModuleInterop).
      const loaded = (await import(path.join(DIR, "index"))) as { default: () => Promise<unknown> };
      const program = loaded.default;
      await program();
    },
  );
});

test("two instances, each in its own namespace, with nothing in common", () => {
  const objects = run.resources.filter(
    (r) => r.custom && r.type.startsWith("kubernetes:") && !r.type.startsWith("pulumi:"),
  );
  const namespaces = new Set(objects.map((r) => r.inputs.metadata?.namespace ?? r.inputs.metadata?.name));
  expect([...namespaces].sort()).toEqual(["pulp-team-a", "pulp-team-b"]);
  const names = objects.map((r) => `${r.type} ${r.inputs.metadata?.namespace}/${r.inputs.metadata?.name}`);
  expect(new Set(names).size).toBe(names.length);
  const histories = run
    .ofType("kubernetes:core/v1:ConfigMap")
    .filter((c) => c.inputs.metadata.name.endsWith("-deployed"))
    .map((c) => `${c.inputs.metadata.namespace}/${c.inputs.metadata.name}`);
  expect(histories.sort()).toEqual(["pulp-team-a/team-a-deployed", "pulp-team-b/team-b-deployed"]);
});

test("every Kubernetes object goes through the program's provider, none through the default one", () => {
  const [provider] = run.ofType("pulumi:providers:kubernetes");
  expect(provider.inputs.kubeconfig).toContain("kind: Config");
  const objects = run.resources.filter((r) => r.custom && r.type.startsWith("kubernetes:"));
  expect(objects.length).toBeGreaterThan(30);
  expect(objects.filter((r) => !r.provider.startsWith(`${provider.urn}::`)).map((r) => r.urn)).toEqual([]);
});

test("each instance runs the release its stack file names", () => {
  const image = (name: string) =>
    run.k8s("Deployment", name).inputs.spec.template.spec.containers[0].image as string;
  expect(image("team-a-api")).toBe("quay.io/pulp/pulp-minimal:3.123.1");
  expect(image("team-b-api")).toBe("quay.io/pulp/pulp-minimal:3.121.3");
  expect(image("team-b-web")).toBe("quay.io/pulp/pulp-web:3.121.3");
});
