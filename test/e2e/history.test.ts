// Kwok bed, real engine: each install's upgrade history lives in its namespace (configmap
// <instance>-deployed), written by the component once an update rolled out, read before the next plan,
// kept on destroy. An install that nothing records (here pulp-operator's) is refused with a kubectl
// command, and that command pasted as printed makes the next preview plan an upgrade from it.
import {
  deleteNamespace,
  dropStack,
  freshStack,
  getJson,
  kubectl,
  kubectlTry,
  mustPulumi,
  pulumi,
} from "../../testbed/harness";

jest.setTimeout(20 * 60 * 1000);

const STACK = "history";
const NS = "pulp-history";
const HISTORY = "pulp-deployed";

beforeAll(() => freshStack(STACK, { namespace: NS }), 10 * 60 * 1000);

afterAll(() => {
  pulumi(STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
  dropStack(STACK, NS);
});

/** The first line that starts with `kubectl create configmap` in what a run printed. */
const fixIn = (said: string) => /kubectl create configmap [^\n]*/.exec(said)?.[0].trim();

test("pulp-operator's install in the namespace is refused, and the printed kubectl command lets the preview plan from its version", () => {
  // What pulp-operator 2.0.0 leaves for a Pulp resource named `example`: its labels, not ours, and no history.
  kubectl(["create", "namespace", NS]);
  try {
    kubectl(["create", "deployment", "example-api", "-n", NS, "--image=quay.io/pulp/pulp-minimal:3.84.0"]);
    kubectl([
      "label",
      "deployment",
      "example-api",
      "-n",
      NS,
      "app.kubernetes.io/instance=pulp-api-example",
      "app.kubernetes.io/component=api",
      "app.kubernetes.io/managed-by=pulp-operator",
      "pulp_cr=example",
    ]);
    const refused = pulumi(STACK, ["preview"]);
    const said = `${refused.stdout}${refused.stderr}`;
    expect(refused.code).not.toBe(0);
    expect(said).toContain(
      `pulp-operator runs a Pulp (its Pulp resource example) in namespace ${NS} (deployments example-api), ` +
        "and instance pulp has no upgrade history",
    );
    const fix = fixIn(said);
    expect(fix).toBe(
      `kubectl create configmap ${HISTORY}-by-hand -n ${NS} --from-literal=pulpcoreVersion=3.84.0 --from-literal=idle=false`,
    );
    kubectl(fix!.split(" ").slice(1));
    const planned = pulumi(STACK, ["preview", "--json"]);
    expect({ code: planned.code, out: planned.code === 0 ? "" : planned.stdout.slice(-3000) }).toEqual({
      code: 0,
      out: "",
    });
    const messages = (JSON.parse(planned.stdout).diagnostics as { message: string }[]).map((d) => d.message);
    // Planned as an upgrade from the version the command recorded, not as an install.
    expect(messages.filter((m) => m.includes("Upgrade plan ["))).toEqual([
      expect.stringMatching(/Upgrade plan \[[a-z-]+\]: upgrade 3\.84\.0 -> 3\.85\.0/),
    ]);
  } finally {
    deleteNamespace(NS, 120);
  }
});

test("an install records its history; one deleted by hand is planned around and comes back with a refresh; destroy keeps it", () => {
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  expect(getJson(["configmap", HISTORY, "-n", NS]).data).toEqual({
    pulpcoreVersion: "3.85.0",
    idle: "false",
  });

  // Deleted by hand: the plan falls back (here to this stack's outputs; a program without them, to the
  // Deployments' version label, unit-tested in history.test.ts), never to an install.
  kubectl(["delete", "configmap", HISTORY, "-n", NS]);
  const planned = mustPulumi(STACK, ["preview", "--json"]);
  const messages = (JSON.parse(planned.stdout).diagnostics as { message: string }[]).map((d) => d.message);
  expect(messages.filter((m) => m.includes("Upgrade plan ["))).toEqual([]); // [install] would be logged
  // The state still holds it: a refresh sees it gone, and the update writes it again.
  mustPulumi(STACK, ["up", "--yes", "--skip-preview", "--refresh"]);
  expect(getJson(["configmap", HISTORY, "-n", NS]).data).toEqual({
    pulpcoreVersion: "3.85.0",
    idle: "false",
  });

  mustPulumi(STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
  expect(kubectlTry(["get", "configmap", HISTORY, "-n", NS]).ok).toBe(true);
});
