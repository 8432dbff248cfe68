// Kwok bed, real engine: each install's upgrade history lives in its namespace (configmap
// <instance>-deployed), written by the component once an update rolled out, read before the next plan,
// kept on destroy. pulp-operator's install, which nothing here records, is refused while its Pulp resource
// owns it, then taken over at the release its image names.
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

test("pulp-operator's install is refused while its resource owns it, then taken over at the release its image names", () => {
  // What pulp-operator 2.0.0 leaves for a Pulp resource named `example`: its labels, not ours, no history,
  // and an owner. A ConfigMap stands in for the Pulp resource (an owner that does not exist is collected).
  kubectl(["create", "namespace", NS]);
  try {
    kubectl(["create", "configmap", "example", "-n", NS]);
    const owner = getJson(["configmap", "example", "-n", NS]).metadata;
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
    const patch = (type: "merge" | "json", body: unknown) =>
      kubectl(["patch", "deployment", "example-api", "-n", NS, "--type", type, "-p", JSON.stringify(body)]);
    const reference = { apiVersion: "v1", kind: "ConfigMap", name: "example", uid: owner.uid };
    patch("merge", { metadata: { ownerReferences: [reference] } });
    const owned = pulumi(STACK, ["preview"]);
    expect(owned.code).not.toBe(0);
    expect(`${owned.stdout}${owned.stderr}`).toContain(
      `pulp-operator still manages a Pulp in namespace ${NS} (its Pulp resource example owns deployments ` +
        "example-api), and instance pulp has no upgrade history",
    );
    expect(`${owned.stdout}${owned.stderr}`).toContain(
      `kubectl delete pulp example -n ${NS} --cascade=orphan`,
    );

    // What that delete does to what the resource made: its ownerReferences go, the objects stay.
    patch("json", [{ op: "remove", path: "/metadata/ownerReferences" }]);
    const older = pulumi(STACK, ["preview"]);
    expect(older.code).not.toBe(0);
    expect(`${older.stdout}${older.stderr}`).toContain(
      "which runs pulpcore 3.84.0, at pulpcore 3.85.0 (quay.io/pulp/pulp-minimal:3.85.0); nothing was changed. " +
        "Take it over at the release it runs, then upgrade as any other update: pulumi config set pulp:image " +
        "quay.io/pulp/pulp-minimal:3.84.0",
    );

    // At the stack's release: planned from it, as a takeover, never as an install.
    kubectl([
      "set",
      "image",
      "deployment/example-api",
      "-n",
      NS,
      "pulp-minimal=quay.io/pulp/pulp-minimal:3.85.0",
    ]);
    const planned = pulumi(STACK, ["preview", "--json"]);
    expect({ code: planned.code, out: planned.code === 0 ? "" : planned.stdout.slice(-3000) }).toEqual({
      code: 0,
      out: "",
    });
    const messages = (JSON.parse(planned.stdout).diagnostics as { message: string }[]).map((d) => d.message);
    expect(messages.filter((m) => m.includes("Upgrade plan ["))).toEqual([]); // [install] would be logged
    expect(messages.join("\n")).toContain(
      "pulp takes over pulp-operator's install at pulpcore 3.85.0, the release its image names",
    );
  } finally {
    deleteNamespace(NS, 120);
  }
});

test("an install records its history; one deleted by hand is planned around and comes back with a refresh; destroy keeps it", () => {
  mustPulumi(STACK, ["up", "--yes", "--skip-preview"]);
  expect(getJson(["configmap", HISTORY, "-n", NS]).data).toEqual({
    pulpcoreVersion: "3.85.0",
    idle: "false",
    artifactStorage: "claim pulp-artifacts",
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
    artifactStorage: "claim pulp-artifacts",
  });

  mustPulumi(STACK, ["destroy", "--yes", "--skip-preview", "--exclude-protected"]);
  expect(kubectlTry(["get", "configmap", HISTORY, "-n", NS]).ok).toBe(true);
});
