// Kwok e2e. Moving a Pulp stack from `pulumi up` by hand to the operator without deleting anything
// (stacks/README.md "Taking over a stack installed by hand"): Pulp installed by hand with its own
// namespace (`pulp:createNamespace` true, as `npm run up:local` does), then the delivery program with
// `delivery:adoptPulpNamespace: true` imports that namespace, then the same Pulumi stack runs as the
// workspace would run it (the Stack's config, a kubeconfig impersonating the workspace ServiceAccount):
// the Namespace leaves the Pulp state, and the namespace and every Pulp object keep their uid.
import * as fs from "fs";
import * as path from "path";
import * as yaml from "js-yaml";
import { KUBECONFIG, REPO, STATE, stackLocks } from "../../testbed/local/environment";
import { freshStack, getJson, items, kubectl, kubectlTry, mustPulumi, pulumi } from "../../testbed/harness";

jest.setTimeout(20 * 60 * 1000);

const PULP_STACK = "adopt-e2e-pulp";
const DELIVERY_STACK = "adopt-e2e";
const PULP_NS = "pulp-adopt-e2e";
const DELIVERY_NS = "pulp-adopt-e2e-delivery";
const CR = "pulp-adopt-e2e";
const SA_USER = `system:serviceaccount:${DELIVERY_NS}:${CR}-workspace`;
const deliveryFile = path.join(REPO, "stacks", `Pulumi.${DELIVERY_STACK}.yaml`);
const pulpFile = path.join(REPO, `Pulumi.${PULP_STACK}.yaml`);
const saKubeconfig = path.join(STATE, "cluster", "kubeconfig-adopt-workspace");
const timings: Record<string, number> = {};

/** uid of every object the Pulp program made (and of the namespace), by kind/name. */
function uids(): Record<string, string> {
  const out: Record<string, string> = {
    [`namespace/${PULP_NS}`]: getJson(["namespace", PULP_NS]).metadata.uid,
  };
  for (const kind of ["deployments", "services", "secrets", "configmaps", "persistentvolumeclaims", "jobs"]) {
    for (const o of items(kind, PULP_NS)) {
      if (o.metadata.ownerReferences?.length) continue; // made by a controller, not by Pulumi
      out[`${kind}/${o.metadata.name}`] = o.metadata.uid;
    }
  }
  return out;
}

function deliveryConfig(extra: Record<string, unknown>) {
  const config = {
    pulpNamespace: PULP_NS,
    deliveryNamespace: DELIVERY_NS,
    stackName: CR,
    pulumiStack: `organization/pulp/${PULP_STACK}`,
    projectRepo: "https://127.0.0.1:9443/local/pulp-pulumi.git",
    branch: "main",
    backend: { secretName: "pulp-delivery-state", key: "url" },
    secretsProvider: { passphrase: { secretName: "pulp-delivery-state", key: "passphrase" } },
    pulpConfig: {
      contentOrigin: "http://pulp.localhost:8080",
      database: { cloudnativepg: { instances: 1 } },
    },
    ...extra,
  };
  fs.writeFileSync(
    deliveryFile,
    yaml.dump({ config: Object.fromEntries(Object.entries(config).map(([k, v]) => [`delivery:${k}`, v])) }),
  );
}

beforeAll(
  () => {
    for (const lock of stackLocks(DELIVERY_STACK, "pulp-delivery").filter((l) => l.stale))
      fs.rmSync(lock.file);
    pulumi(DELIVERY_STACK, ["stack", "rm", "--force", "--yes"], undefined, "stacks");
    kubectlTry(["delete", "namespace", DELIVERY_NS, "--ignore-not-found", "--wait=true", "--timeout=120s"]);
    kubectlTry(["delete", "clusterrolebindings,clusterroles", "-l", `app.kubernetes.io/instance=${CR}`]);
    // Starts the cluster if needed, clears the Pulp stack and its namespace.
    freshStack(PULP_STACK, {
      namespace: PULP_NS,
      database: { cloudnativepg: { instances: 1, storageSize: "1Gi" } },
    });
  },
  10 * 60 * 1000,
);

afterAll(() => {
  process.stdout.write(`adopt e2e timings (s): ${JSON.stringify(timings)}\n`);
  pulumi(DELIVERY_STACK, ["destroy", "--yes", "--skip-preview"], undefined, "stacks");
  pulumi(DELIVERY_STACK, ["stack", "rm", "--force", "--yes"], undefined, "stacks");
  // Back to the admin kubeconfig for the Pulp stack's own cleanup.
  const doc = yaml.load(fs.readFileSync(pulpFile, "utf8")) as { config: Record<string, unknown> };
  delete doc.config["kubernetes:kubeconfig"];
  fs.writeFileSync(pulpFile, yaml.dump(doc));
  pulumi(PULP_STACK, ["destroy", "--yes", "--skip-preview"]);
  pulumi(PULP_STACK, ["stack", "rm", "--force", "--yes"]);
  for (const f of [deliveryFile, pulpFile, saKubeconfig]) fs.rmSync(f, { force: true });
  for (const ns of [PULP_NS, DELIVERY_NS]) kubectlTry(["delete", "namespace", ns, "--wait=false"]);
  kubectlTry(["delete", "clusterrolebindings,clusterroles", "-l", `app.kubernetes.io/instance=${CR}`]);
});

test("a stack installed by hand is taken over by the delivery program and the workspace, nothing deleted", () => {
  // 1. By hand, as after `npm run up:local`: the Pulp stack owns its namespace.
  const byHand = mustPulumi(PULP_STACK, ["up", "--yes", "--skip-preview"]);
  timings.byHandUp = byHand.seconds;
  const before = uids();
  expect(Object.keys(before).filter((k) => k.startsWith("deployments/")).length).toBeGreaterThanOrEqual(4);
  const pulpState = () =>
    JSON.parse(mustPulumi(PULP_STACK, ["stack", "export"]).stdout).deployment.resources.map(
      (r: any) => r.type,
    );
  expect(pulpState()).toContain("kubernetes:core/v1:Namespace");

  // 2. The delivery program, adopting the namespace: imported (same uid), not created or replaced.
  deliveryConfig({ adoptPulpNamespace: true });
  mustPulumi(DELIVERY_STACK, ["stack", "init"], "stacks");
  const delivery = mustPulumi(DELIVERY_STACK, ["up", "--yes", "--skip-preview"], "stacks");
  timings.deliveryUp = delivery.seconds;
  expect(delivery.stdout).toMatch(/1 imported/);
  expect(delivery.stdout).not.toMatch(/replaced|deleted/);
  expect(uids()).toEqual(before);
  expect(pulumi(DELIVERY_STACK, ["preview", "--expect-no-changes"], undefined, "stacks").code).toBe(0);

  // 3. The same Pulumi stack as the workspace runs it: the Stack CR's config, the workspace's identity.
  const admin = yaml.load(fs.readFileSync(KUBECONFIG, "utf8")) as {
    users: { user: Record<string, unknown> }[];
  };
  for (const u of admin.users) u.user.as = SA_USER;
  fs.writeFileSync(saKubeconfig, yaml.dump(admin));
  const stack = getJson(["stacks.pulumi.com", CR, "-n", DELIVERY_NS]);
  expect(stack.spec.config["pulp:createNamespace"]).toBe("false");
  const doc = yaml.load(fs.readFileSync(pulpFile, "utf8")) as { config: Record<string, unknown> };
  for (const [k, v] of Object.entries(stack.spec.config as Record<string, unknown>))
    if (k === "pulp:namespace" || k === "pulp:createNamespace") doc.config[k] = v;
  doc.config["kubernetes:kubeconfig"] = saKubeconfig;
  fs.writeFileSync(pulpFile, yaml.dump(doc));
  const preview = mustPulumi(PULP_STACK, ["preview", "--diff"]);
  // Only the Namespace changes, and it is dropped from the state, not deleted from the cluster.
  expect(preview.stdout).toMatch(/- 1 to delete/);
  expect(preview.stdout).not.toMatch(/to replace|to create/);
  const asWorkspace = pulumi(PULP_STACK, ["up", "--yes", "--skip-preview"]);
  timings.workspaceUp = asWorkspace.seconds;
  const output = asWorkspace.stdout + asWorkspace.stderr;
  expect({
    code: asWorkspace.code,
    forbidden: [...new Set(output.match(/is forbidden: [^\n]*/g) ?? [])].filter(
      (f) => !f.includes("storageclasses"),
    ),
    tail: asWorkspace.code === 0 ? "" : output.slice(-3000),
  }).toEqual({ code: 0, forbidden: [], tail: "" });
  expect(pulpState()).not.toContain("kubernetes:core/v1:Namespace");
  expect(uids()).toEqual(before);
  expect(pulumi(PULP_STACK, ["preview", "--expect-no-changes"]).code).toBe(0);

  // 4. The delivery program manages the namespace now, and still never deletes it.
  const destroyed = mustPulumi(DELIVERY_STACK, ["destroy", "--yes", "--skip-preview"], "stacks");
  timings.deliveryDestroy = destroyed.seconds;
  expect(uids()).toEqual(before);
  expect(kubectl(["get", "namespace", DELIVERY_NS, "-o", "name"]).trim()).toBe(`namespace/${DELIVERY_NS}`);
});
